// The training is arithmetic on one goroutine: under the race detector
// it would take minutes and find nothing.
//go:build !race

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCommittedModel: the committed model.json is what the committed
// corpus trains (the training is reproducible from the repository), and
// nothing else is written.
func TestCommittedModel(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds the whole corpus with the built-in model")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-dir", "..", "-check"}, &out); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if !strings.Contains(out.String(), "is what the corpus trains") {
		t.Errorf("no verdict in:\n%s", out.String())
	}
}
