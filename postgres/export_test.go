package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// SetQueryTracer makes the stores opened after see every statement
// through t (nil: none). Set by a test that is not parallel, while the
// parallel ones wait.
func SetQueryTracer(t pgx.QueryTracer) { queryTracer = t }

// UserTables exposes userTables to the schema test.
var UserTables = userTables

// HoldIndexLock begins a transaction that locks a thread as the index
// jobs' writes do (indexLock), and returns what ends it.
func HoldIndexLock(ctx context.Context, s *Store, userID, threadID string) (func(), error) {
	tx, err := s.pool.BeginTx(ctx, writeTx)
	if err != nil {
		return nil, err
	}
	if _, err := findLiveThread(ctx, tx, userID, threadID, indexLock); err != nil {
		tx.Rollback(ctx)
		return nil, err
	}
	return func() { tx.Rollback(context.Background()) }, nil
}

// FormatError exposes formatError to the error-mapping test.
var FormatError = formatError
