package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// PrimaryKeys returns each table's primary-key columns in key order, for
// the schema test that checks every key starts with user_id. The FTS5
// indexes (virtual tables and their shadow tables) are left out: they are
// indexes of memories and messages, keyed by their rows' rowids and kept
// in sync with them by triggers (see migration/0004_memory.sql).
func PrimaryKeys(ctx context.Context, s *Store) (map[string][]string, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT m.name, p.name, p.pk FROM pragma_table_list m, pragma_table_info(m.name) p
		WHERE m.schema = 'main' AND m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.pk`)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	defer rows.Close()
	keys := map[string][]string{}
	for rows.Next() {
		var table, col string
		var pk int
		if err := rows.Scan(&table, &col, &pk); err != nil {
			return nil, err
		}
		if _, ok := keys[table]; !ok {
			keys[table] = nil
		}
		if pk > 0 {
			keys[table] = append(keys[table], col)
		}
	}
	return keys, rows.Err()
}

// Pragmas returns the journal mode and synchronous level of the writer
// connection (2 is FULL).
func Pragmas(ctx context.Context, s *Store) (journalMode string, synchronous int, err error) {
	if err := s.writer.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journalMode); err != nil {
		return "", 0, err
	}
	err = s.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&synchronous)
	return journalMode, synchronous, err
}

// CheckSearchIndexes runs FTS5's integrity check of the full-text indexes
// against the memories and messages they index, and of the chunks' index
// (contentless: migration 0021) in itself; it fails if an index holds a
// row differently from its table, or is corrupt.
func CheckSearchIndexes(ctx context.Context, s *Store) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := s.indexQueued(tx); err != nil { // what the group wrote before
			return err
		}
		for _, table := range []string{"memories_fts", "messages_fts", "chunks_fts"} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`, rank) VALUES ('integrity-check', 1)`); err != nil {
				return fmt.Errorf("check %s: %w", table, err)
			}
		}
		return nil
	})
}
