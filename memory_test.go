package agentmem_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
)

// TestMemory_Sources: a memory's sources are its provenance first, then
// those given, each once, in order; an update from a thread adds its
// range, one without a thread none; a source without a thread, or whose
// seqs are no range, is refused, naming it.
func TestMemory_Sources(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rg := func(thread string, from, to int64) agentmem.ThreadRange {
		return agentmem.ThreadRange{ThreadID: thread, SeqFrom: from, SeqTo: to}
	}
	m := &agentmem.Memory{UserID: "alice", Text: "User lives in Hull.", ThreadID: "t1", SeqFrom: 1, SeqTo: 2,
		Sources: []agentmem.ThreadRange{rg("t2", 3, 3), rg("t2", 3, 3), rg("t1", 4, 4)}}
	if err := m.Prepare(now); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t1", 1, 2), rg("t2", 3, 3), rg("t1", 4, 4)}, m.Sources); diff != "" {
		t.Fatalf("prepared sources (-want +got):\n%s", diff)
	}
	// Given with the provenance elsewhere than first (moved by an update,
	// as an export holds it): kept as given.
	moved := &agentmem.Memory{UserID: "alice", Text: "x", ThreadID: "t2", SeqFrom: 3, SeqTo: 3, Sources: []agentmem.ThreadRange{rg("t1", 1, 2), rg("t2", 3, 3)}}
	if err := moved.Validate(); err != nil || !cmp.Equal(moved.Sources, []agentmem.ThreadRange{rg("t1", 1, 2), rg("t2", 3, 3)}) {
		t.Fatalf("sources %v, %v: want them as given", moved.Sources, err)
	}
	text := "User lives in Hull, in the old town."
	if err := m.ApplyUpdate(agentmem.MemoryUpdate{Text: &text, ThreadID: "t3", SeqFrom: 5, SeqTo: 5}, now); err != nil {
		t.Fatal(err)
	}
	if err := m.ApplyUpdate(agentmem.MemoryUpdate{Text: &text}, now); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agentmem.ThreadRange{rg("t1", 1, 2), rg("t2", 3, 3), rg("t1", 4, 4), rg("t3", 5, 5)}, m.Sources); diff != "" {
		t.Fatalf("sources after the updates (-want +got):\n%s", diff)
	}
	if m.AddSource(rg("t3", 5, 5)) || !m.AddSource(rg("t3", 6, 6)) || len(m.Sources) != 5 {
		t.Fatalf("AddSource: sources %v", m.Sources)
	}
	api := &agentmem.Memory{UserID: "alice", Text: "User likes tea."}
	if err := api.Prepare(now); err != nil || api.Sources != nil {
		t.Fatalf("a memory of no thread: sources %v, %v", api.Sources, err)
	}
	for _, bad := range []agentmem.ThreadRange{rg("", 1, 1), rg("t1", 2, 1), rg("t1", -1, 1), rg("a/b", 1, 1)} {
		m := &agentmem.Memory{UserID: "alice", Text: "x", Sources: []agentmem.ThreadRange{bad}}
		if err := m.Validate(); agentmem.ErrorCode(err) != agentmem.EINVALID || !strings.Contains(agentmem.ErrorMessage(err), "sources[0]") {
			t.Errorf("source %+v: %v, want EINVALID naming sources[0]", bad, err)
		}
	}
}

// TestPrepareUserImport_SourcesOfVersion2: a memory of an export of
// version 2, which has no sources, gets its provenance as its one source.
func TestPrepareUserImport_SourcesOfVersion2(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	x := &agentmem.UserExport{Version: 2, Memories: []*agentmem.MemoryExport{
		{Memory: &agentmem.Memory{Text: "User lives in Hull.", ThreadID: "t1", SeqFrom: 2, SeqTo: 3, Source: agentmem.SourceExtracted}},
		{Memory: &agentmem.Memory{Text: "User likes tea."}},
	}}
	if err := agentmem.PrepareUserImport("alice", x, agentmem.ImportOptions{}, now, nil); err != nil {
		t.Fatal(err)
	}
	if want := []agentmem.ThreadRange{{ThreadID: "t1", SeqFrom: 2, SeqTo: 3}}; !cmp.Equal(x.Memories[0].Sources, want) || x.Memories[1].Sources != nil {
		t.Fatalf("sources %v and %v, want %v and none", x.Memories[0].Sources, x.Memories[1].Sources, want)
	}
	if x.Version = agentmem.ExportVersion + 1; agentmem.PrepareUserImport("alice", x, agentmem.ImportOptions{}, now, nil) == nil {
		t.Fatalf("version %d imported", x.Version)
	}
}
