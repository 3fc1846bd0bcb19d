package agentmem_test

import (
	"testing"
	"time"

	"github.com/agentmem/agentmem"
)

// TestParseAge: Go's durations, days and weeks, and their combinations;
// negative, malformed and absurd ages are EINVALID naming the field.
func TestParseAge(t *testing.T) {
	const day = 24 * time.Hour
	for in, want := range map[string]time.Duration{
		"0": 0, "0d": 0, "30d": 30 * day, "12h": 12 * time.Hour, "90m": 90 * time.Minute, "1h30m": 90 * time.Minute,
		"2w": 14 * day, "1d12h": 36 * time.Hour, "36h": 36 * time.Hour, "1w2d": 9 * day, "1.5d": 36 * time.Hour, "2d30m": 2*day + 30*time.Minute,
	} {
		if got, err := agentmem.ParseAge("age", in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "w", "-3d", "x", "-1h", "3x", "1d-2h", "d1", "1dd", "5300w", "99999999999999999d", " 1d"} {
		_, err := agentmem.ParseAge("older_than", bad)
		if agentmem.ErrorCode(err) != agentmem.EINVALID {
			t.Errorf("ParseAge(%q): %v, want EINVALID", bad, err)
		} else if msg := agentmem.ErrorMessage(err); len(msg) < 10 || msg[:10] != "older_than" {
			t.Errorf("ParseAge(%q): %q does not name the field", bad, msg)
		}
	}
}
