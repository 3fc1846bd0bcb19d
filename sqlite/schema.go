package sqlite

import (
	"context"
	"fmt"
)

// PrimaryKeys returns each table's primary-key columns in key order, for
// the schema test that checks every key starts with user_id.
func PrimaryKeys(ctx context.Context, s *Store) (map[string][]string, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT m.name, p.name, p.pk FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.pk`)
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
