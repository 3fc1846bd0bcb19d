package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImport_Duplicates: `agentmem import` of a file that holds records
// twice, identical, says that it imported each once and names the
// repeats; it does not list a thread twice.
func TestImport_Duplicates(t *testing.T) {
	dir := t.TempDir()
	thread := `{"thread":{"id":"t"},"messages":[{"id":"a","role":"user","content":"hi"}]}`
	file := filepath.Join(dir, "x.json")
	body := `{"version":2,"threads":[` + thread + `,` + thread + `],"memories":[{"id":"m","text":"User says hi."},{"id":"m","text":"User says hi."}]}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := runCmd(t, "import", "--db", filepath.Join(dir, "a.db"), "--user", "bob", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"imported: 1 thread, 1 message, 1 memory\n", "repeated in the file (imported once): 1 thread, 1 message, 1 memory\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("import said %q, want %q in it", got, want)
		}
	}
	if n := strings.Count(got, "imported thread t "); n != 1 {
		t.Fatalf("import said %q: thread t listed %d times, want once", got, n)
	}
}
