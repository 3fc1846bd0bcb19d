package postgres

import "time"

// utc returns t in UTC; pgx reads timestamptz in the local time zone.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
