package vecenc

import (
	"bytes"
	"testing"

	"github.com/agentmem/agentmem"
)

// TestID: every ID comes back from its stored form; one that starts with
// a canonical UUID takes 17 bytes for it, another is its own bytes; no two
// IDs share a stored form.
func TestID(t *testing.T) {
	uuid := agentmem.NewID()
	seen := map[string]string{}
	for _, tc := range []struct {
		id    string
		bytes int
	}{
		{uuid, 17},
		{uuid + agentmem.SummaryVectorSuffix, 17 + len(agentmem.SummaryVectorSuffix)},
		{"00000000-0000-0000-0000-000000000000", 17},
		{"ffffffff-ffff-ffff-ffff-ffffffffffff-x", 19},
		{"t1", 2},
		{"m", 1},
		{"0190ABCD-0000-7000-8000-000000000000", 36}, // upper case: not canonical
		{"0190abcd-0000-7000-8000-00000000000", 35},  // too short
		{"0190abcd_0000-7000-8000-000000000000", 36}, // no dash
		{"0190abcg-0000-7000-8000-000000000000", 36}, // not hex
		{"héllo-wörld", len("héllo-wörld")},
	} {
		b := EncodeID(tc.id)
		if len(b) != tc.bytes {
			t.Errorf("EncodeID(%q) = %d bytes, want %d", tc.id, len(b), tc.bytes)
		}
		if got := ID(b); got != tc.id {
			t.Errorf("ID(EncodeID(%q)) = %q", tc.id, got)
		}
		if other, ok := seen[string(b)]; ok {
			t.Errorf("%q and %q are both stored as %x", other, tc.id, b)
		}
		seen[string(b)] = tc.id
		if got := AppendID([]byte("x"), tc.id); !bytes.Equal(got[1:], b) {
			t.Errorf("AppendID(x, %q) = %x, want x and %x", tc.id, got, b)
		}
	}
}

// TestID_SQL: the stored form of a canonical UUID is the one the
// migrations compute in SQL: the marker, then the hex digits 13–32 of the
// UUID without its dashes, then digits 1–12, then the suffix.
func TestID_SQL(t *testing.T) {
	id := "0190abcd-ef01-7234-8567-89abcdef0123#s"
	want := []byte{uuidID, 0x72, 0x34, 0x85, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x01, 0x90, 0xab, 0xcd, 0xef, 0x01, '#', 's'}
	if got := EncodeID(id); !bytes.Equal(got, want) {
		t.Fatalf("EncodeID(%q) = %x, want %x", id, got, want)
	}
}

func TestScope(t *testing.T) {
	for i, s := range Scopes {
		if err := agentmem.ValidateTextScope(s); err != nil {
			t.Errorf("Scopes[%d] = %q: %v", i, s, err)
		}
		if c, ok := ScopeCode(s); !ok || c != i {
			t.Errorf("ScopeCode(%q) = %d, %v; want %d", s, c, ok, i)
		}
		if got, ok := Scope(int64(i)); !ok || got != s {
			t.Errorf("Scope(%d) = %q, %v; want %q", i, got, ok, s)
		}
	}
	if _, ok := ScopeCode("threads"); ok {
		t.Error("ScopeCode(threads) has a code")
	}
	if _, ok := Scope(int64(len(Scopes))); ok {
		t.Error("Scope(len(Scopes)) has a scope")
	}
}

func BenchmarkID(b *testing.B) {
	enc := EncodeID(agentmem.NewID())
	for b.Loop() {
		_ = ID(enc)
	}
}
