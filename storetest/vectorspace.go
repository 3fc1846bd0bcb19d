package storetest

import (
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func mustVectorSpaces(tb testing.TB, s agentmem.VectorStore, user string) []string {
	tb.Helper()
	spaces, err := s.VectorSpaces(ctx, user)
	if err != nil {
		tb.Fatalf("VectorSpaces: %v", err)
	}
	if spaces == nil {
		tb.Fatal("VectorSpaces returned nil, want an empty slice")
	}
	return spaces
}

func wantVectorSpaces(tb testing.TB, s agentmem.VectorStore, user string, want ...string) {
	tb.Helper()
	if diff := cmp.Diff(want, mustVectorSpaces(tb, s, user), cmpopts.EquateEmpty()); diff != "" {
		tb.Fatalf("VectorSpaces(%s) mismatch (-want +got):\n%s", user, diff)
	}
}

// testVectorSpaces: the spaces a user has vectors in, and deleting one of
// them (what re-embedding in a new space does to the old one) without
// touching other spaces or users.
func testVectorSpaces(t *testing.T, s agentmem.Store) {
	wantVectorSpaces(t, s, "alice")
	vec := func(scope, id, space string, v ...float32) agentmem.Vector {
		return agentmem.Vector{Scope: scope, ID: id, Space: space, Vec: v}
	}
	mustPutVectors(t, s, "alice",
		vec(agentmem.ScopeMemories, "m1", "old/2", 0.6, 0.8),
		vec(agentmem.ScopeMessages, "x1", "old/2", 1, 0),
		vec(agentmem.ScopeMemories, "m1", "new/3", 1, 0, 0),
		vec(agentmem.ScopeMessages, "x1", "new/3", 0, 1, 0))
	mustPutVectors(t, s, "bob", vec(agentmem.ScopeMemories, "m1", "old/2", 1, 0))
	wantVectorSpaces(t, s, "alice", "new/3", "old/2")
	wantVectorSpaces(t, s, "bob", "old/2")

	before := mustVectorsVersion(t, s, "alice", "old/2")
	newVersion, bobVersion := mustVectorsVersion(t, s, "alice", "new/3"), mustVectorsVersion(t, s, "bob", "old/2")
	if err := s.DeleteVectorSpace(ctx, "alice", "old/2"); err != nil {
		t.Fatalf("DeleteVectorSpace: %v", err)
	}
	wantVectorKeys(t, s, "alice", "old/2")
	wantVectorKeys(t, s, "alice", "new/3", "memories/m1", "messages/x1")
	wantVectorKeys(t, s, "bob", "old/2", "memories/m1")
	wantVectorSpaces(t, s, "alice", "new/3")
	wantVectorSpaces(t, s, "bob", "old/2")
	if v := mustVectorsVersion(t, s, "alice", "old/2"); v == before {
		t.Fatal("VectorsVersion of the deleted space did not change")
	}
	if v := mustVectorsVersion(t, s, "alice", "new/3"); v != newVersion {
		t.Fatal("deleting a space changed the VectorsVersion of another")
	}
	if v := mustVectorsVersion(t, s, "bob", "old/2"); v != bobVersion {
		t.Fatal("deleting alice's space changed bob's VectorsVersion")
	}

	t.Run("Again", func(t *testing.T) {
		// Nothing left to delete, and a space never used: not errors.
		for _, space := range []string{"old/2", "never/1"} {
			if err := s.DeleteVectorSpace(ctx, "alice", space); err != nil {
				t.Fatalf("DeleteVectorSpace(%s): %v", space, err)
			}
		}
		if err := s.DeleteVectorSpace(ctx, "nobody", "old/2"); err != nil {
			t.Fatalf("DeleteVectorSpace of an unknown user: %v", err)
		}
		wantVectorSpaces(t, s, "nobody")
		// A space without vectors, never put, still answers a new version
		// on each call.
		if v1, v2 := mustVectorsVersion(t, s, "alice", "never/1"), mustVectorsVersion(t, s, "alice", "never/1"); v1 == v2 {
			t.Fatal("deleting a space never used gave it a stable VectorsVersion")
		}
	})
	t.Run("NewDimension", func(t *testing.T) {
		// Emptied, the space takes vectors of another dimension.
		mustPutVectors(t, s, "alice", vec(agentmem.ScopeMemories, "m1", "old/2", 1, 0, 0, 0))
		wantVectorSpaces(t, s, "alice", "new/3", "old/2")
		if err := s.DeleteVectorSpace(ctx, "alice", "old/2"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ItemDeleted", func(t *testing.T) {
		// A space whose last vector went with its item is not listed.
		m := MustCreateMemory(t, s, &agentmem.Memory{UserID: "carol", Text: "Carol likes tea."})
		mustPutVectors(t, s, "carol", vec(agentmem.ScopeMemories, m.ID, "old/2", 1, 0))
		wantVectorSpaces(t, s, "carol", "old/2")
		if err := s.DeleteMemory(ctx, "carol", m.ID); err != nil {
			t.Fatal(err)
		}
		wantVectorSpaces(t, s, "carol")
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		wantCode(t, s.DeleteVectorSpace(ctx, "alice", ""), agentmem.EINVALID)
		wantVectorSpaces(t, s, "alice", "new/3")
	})
}
