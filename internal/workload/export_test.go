package workload

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var (
	exportFile = flag.String("export", "", "write Conversation(ConversationSeed, -n) to this file, one JSON object a line (bench/peers reads it)")
	exportN    = flag.Int("n", 100_000, "turns to -export")
)

// TestExport writes the context benchmarks' conversation for the peers'
// harness (bench/peers/run.sh):
//
//	go test ./internal/workload -run TestExport -args -export /tmp/everyday.jsonl -n 100000
//
// Without -export it checks only that the conversation is the same for a
// seed and that a longer one begins with a shorter one.
func TestExport(t *testing.T) {
	short, long := Conversation(ConversationSeed, 10), Conversation(ConversationSeed, 20)
	for i, turn := range short {
		if turn != long[i] {
			t.Fatalf("turn %d: %+v, then %+v", i, turn, long[i])
		}
	}
	if short[0].Role != "user" || short[1].Role != "assistant" {
		t.Fatalf("roles: %q, %q; want user, then assistant", short[0].Role, short[1].Role)
	}
	if *exportFile == "" {
		return
	}
	f, err := os.Create(*exportFile)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, turn := range Conversation(ConversationSeed, *exportN) {
		if err := enc.Encode(turn); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
