// The fit is arithmetic on one goroutine: under the race detector it
// would take minutes and find nothing.
//go:build !race

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCommittedCalibrations: the committed calibrations.go is what the
// committed corpus gives (the calibration is reproducible from the
// repository).
func TestCommittedCalibrations(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds the whole corpus with the built-in model")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-dir", "..", "-check"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "is what the corpus gives") {
		t.Errorf("no verdict in:\n%s", out.String())
	}
}
