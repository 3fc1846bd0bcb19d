package core_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentmem/agentmem"
)

// TestService_ExportUserWhole: a user's export holds what belongs to the
// threads it holds — with include_deleted, a soft-deleted thread's
// reflection and the references to it — and nothing that points at what
// it does not hold (a thread deleted, or left out; a memory deleted), so
// that it imports, with and without include_deleted. A memory's sources
// are those of the threads it holds.
func TestService_ExportUserWhole(t *testing.T) {
	backends(t, func(t *testing.T, f *fixture) {
		f.talk(t, "alice", "kept", "I live in Oslo.")
		f.talk(t, "alice", "hidden", "I like tea.", "And coffee.")
		f.talk(t, "alice", "gone", "I have a cat.")
		for _, m := range []*agentmem.Memory{
			{UserID: "alice", ID: "from-kept", Text: "User lives in Oslo.", ThreadID: "kept", SeqFrom: 1, SeqTo: 1},
			{UserID: "alice", ID: "from-hidden", Text: "User likes tea.", ThreadID: "hidden", SeqFrom: 1, SeqTo: 2},
			{UserID: "alice", ID: "from-gone", Text: "User has a cat.", ThreadID: "gone", SeqFrom: 1, SeqTo: 1},
			{UserID: "alice", ID: "later", Text: "User has a dog."},
		} {
			if err := f.store.CreateMemory(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.store.InvalidateMemory(ctx, "alice", "from-gone", "later", "a dog now"); err != nil {
			t.Fatal(err)
		}
		// Oslo said again in the thread that is left out, then hidden.
		if _, err := f.store.WriteMemories(ctx, "alice", []agentmem.MemoryWrite{{ID: "from-kept", AddSource: &agentmem.ThreadRange{ThreadID: "hidden", SeqFrom: 2, SeqTo: 2}}}); err != nil {
			t.Fatal(err)
		}
		kept, hidden := agentmem.ThreadRange{ThreadID: "kept", SeqFrom: 1, SeqTo: 1}, agentmem.ThreadRange{ThreadID: "hidden", SeqFrom: 2, SeqTo: 2}
		if err := f.store.DeleteMemory(ctx, "alice", "later"); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutReflections(ctx, "alice", []*agentmem.Reflection{{ThreadID: "hidden", Status: agentmem.ReflectionNoInsight, ThroughSeq: 2}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutEntities(ctx, "alice", []*agentmem.Entity{{ID: "tea", Name: "Tea"}}); err != nil {
			t.Fatal(err)
		}
		if err := f.store.PutEntityRefs(ctx, "alice", []*agentmem.EntityRef{{EntityID: "tea", ThreadID: "hidden", Seq: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := f.store.DeleteThread(ctx, "alice", "hidden", false); err != nil {
			t.Fatal(err)
		}
		if err := f.store.DeleteThread(ctx, "alice", "gone", true); err != nil {
			t.Fatal(err)
		}
		export := func(includeDeleted bool) (*agentmem.UserExport, map[string]*agentmem.MemoryExport) {
			t.Helper()
			var buf bytes.Buffer
			if err := f.svc.ExportUser(ctx, "alice", agentmem.ExportOptions{IncludeDeleted: includeDeleted}, &buf); err != nil {
				t.Fatal(err)
			}
			var x agentmem.UserExport
			if err := json.Unmarshal(buf.Bytes(), &x); err != nil {
				t.Fatal(err)
			}
			byID := map[string]*agentmem.MemoryExport{}
			for _, m := range x.Memories {
				byID[m.ID] = m
			}
			return &x, byID
		}

		x, mems := export(true)
		if len(x.Threads) != 2 || len(x.Reflections) != 1 || x.Reflections[0].ThreadID != "hidden" {
			t.Fatalf("export with include_deleted: %d threads, reflections %+v; want 2 threads and the soft-deleted thread's reflection", len(x.Threads), x.Reflections)
		}
		if len(x.Entities) != 1 || len(x.Entities[0].References) != 1 || x.Entities[0].References[0].ThreadID != "hidden" {
			t.Fatalf("export with include_deleted: entities %+v; want tea with its reference to the soft-deleted thread", x.Entities)
		}
		if m := mems["from-hidden"]; m == nil || m.ThreadID != "hidden" || m.SeqTo != 2 {
			t.Fatalf("memory from-hidden %+v: want its provenance kept", m)
		}
		if m := mems["from-gone"]; m == nil || m.ThreadID != "" || m.SeqFrom != 0 || m.SupersededBy != "" || m.InvalidAt == nil || len(m.Sources) != 0 {
			t.Fatalf("memory from-gone %+v: want it invalidated, without the thread and the memory that are gone", m)
		}
		if m := mems["from-kept"]; m == nil || !slices.Equal(m.Sources, []agentmem.ThreadRange{kept, hidden}) {
			t.Fatalf("memory from-kept %+v: want both its sources", m)
		}
		res, err := f.svc.ImportUser(ctx, "bob", x, agentmem.ImportOptions{})
		if err != nil || res.Imported.Threads != 2 || res.Imported.Reflections != 1 || res.Imported.Memories != 3 {
			t.Fatalf("import of the export with include_deleted: %+v, %v", res, err)
		}
		if m, err := f.store.FindMemoryByID(ctx, "bob", "from-kept"); err != nil || !slices.Equal(m.Sources, []agentmem.ThreadRange{kept, hidden}) {
			t.Fatalf("bob's memory from-kept %+v, %v: want both its sources", m, err)
		}
		if rs, err := f.store.FindThreadReflections(ctx, "bob", []string{"hidden"}); err != nil || len(rs) != 1 || rs[0].ThroughSeq != 2 {
			t.Fatalf("bob's reflection of the soft-deleted thread: %+v, %v", rs, err)
		}

		x, mems = export(false)
		if len(x.Threads) != 1 || len(x.Reflections) != 0 || len(x.Entities) != 1 || len(x.Entities[0].References) != 0 {
			t.Fatalf("export: %d threads, reflections %+v, entities %+v; want the live thread only, nothing of the soft-deleted one", len(x.Threads), x.Reflections, x.Entities)
		}
		if m := mems["from-hidden"]; m == nil || m.ThreadID != "" || m.SeqTo != 0 {
			t.Fatalf("memory from-hidden %+v: want it without the thread left out", m)
		}
		if m := mems["from-kept"]; m == nil || m.ThreadID != "kept" || !slices.Equal(m.Sources, []agentmem.ThreadRange{kept}) {
			t.Fatalf("memory from-kept %+v: want its provenance kept, and the source in the thread left out left out", m)
		}
		if res, err := f.svc.ImportUser(ctx, "carol", x, agentmem.ImportOptions{}); err != nil || res.Imported.Threads != 1 || res.Imported.Memories != 3 {
			t.Fatalf("import of the export: %+v, %v", res, err)
		}
	})
}
