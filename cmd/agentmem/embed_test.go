package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/google/go-cmp/cmp"
)

// waitJobs waits until the server has done n jobs of a kind.
func waitJobs(t *testing.T, srv *server, kind string, n int) {
	t.Helper()
	for i := 0; ; i++ {
		resp, err := http.Get(srv.URL + "/v1/jobs?status=done&kind=" + kind)
		if err != nil {
			t.Fatal(err)
		}
		var page struct{ Data []*agentmem.Job }
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) >= n {
			return
		}
		if i == 250 {
			t.Fatalf("%d %s jobs done after 5 s, want %d", len(page.Data), kind, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// vectorSpaces opens the (stopped) server's database and returns a user's
// vector spaces.
func vectorSpaces(t *testing.T, db, user string) []string {
	t.Helper()
	s := testutil.MustOpenSQLiteFile(t, db)
	defer s.Close()
	spaces, err := s.VectorSpaces(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return spaces
}

// TestServe_Embedder: serve indexes with the lexical embedder (the
// built-in one of earlier versions); restarted with the default, the
// built-in model, it re-embeds what the lexical embedder indexed, memories
// and summaries in the model's space and messages and chunks in its static
// table's, leaving no vector of the old space; restarted with --embedder
// openai it learns the model's dimension at start, names its space after
// the model and the dimension, and re-embeds again.
func TestServe_Embedder(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "agentmem.db")
	srv := MustServeEnv(t, db, map[string]string{"AGENTMEM_EMBEDDER": "lexical"})
	c := client.New(srv.URL, nil)
	if err := c.CreateThread(ctx, "alice", &agentmem.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessages(ctx, "alice", "t", []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: "I live in Lisbon and I work as a nurse."},
		{Role: agentmem.RoleAssistant, Content: "Noted!"},
	}, ""); err != nil {
		t.Fatal(err)
	}
	waitJobs(t, srv, "index", 1)
	srv.Stop(t)
	if spaces := vectorSpaces(t, db, "alice"); len(spaces) != 1 || !strings.HasPrefix(spaces[0], "lexical-") {
		t.Fatalf("spaces with the lexical embedder: %v", spaces)
	}

	srv = MustServe(t, db)
	waitJobs(t, srv, "reembed", 1)
	srv.Stop(t)
	if diff := cmp.Diff([]string{"minilm-l6-v2-static-v1/256", "minilm-l6-v2-v1/384"}, vectorSpaces(t, db, "alice")); diff != "" {
		t.Fatalf("spaces with the built-in embedder mismatch (-want +got):\n%s", diff)
	}
	s := testutil.MustOpenSQLiteFile(t, db)
	for space, scopes := range map[string][]string{"minilm-l6-v2-v1/384": {agentmem.ScopeMemories}, "minilm-l6-v2-static-v1/256": {agentmem.ScopeMessages}} {
		vs, err := s.FindVectors(ctx, "alice", space, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if !slices.Contains(scopes, v.Scope) {
				t.Errorf("a vector of %s in %s", v.Scope, space)
			}
		}
		if len(vs) == 0 {
			t.Errorf("no vector in %s", space)
		}
	}
	s.Close()

	model := llmtest.NewServer(t)
	model.SetDimensions(48)
	srv = MustServeEnv(t, db, map[string]string{"OPENAI_BASE_URL": model.BaseURL(), "AGENTMEM_EMBEDDER": "openai"})
	waitJobs(t, srv, "reembed", 2)
	srv.Stop(t)
	if diff := cmp.Diff([]string{"openai/text-embedding-3-small/48"}, vectorSpaces(t, db, "alice")); diff != "" {
		t.Fatalf("spaces after the switch mismatch (-want +got):\n%s", diff)
	}
	reqs := model.EmbeddingRequests()
	if len(reqs) < 2 || reqs[0].Model != "text-embedding-3-small" {
		t.Fatalf("embedding requests %+v, want the probe then the re-embedding", reqs)
	}
}

func TestServe_EmbedderConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--embedder", "word2vec"}, nil, "--embedder must be builtin, lexical or openai"},
		{nil, map[string]string{"AGENTMEM_EMBEDDER": "openai"}, "needs an embeddings server"},
		{[]string{"--embedder", "openai", "--embed-model", ""}, nil, "--embed-model is empty"},
	} {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db")}, tc.args...)
		err := run(context.Background(), args, func(k string) string { return tc.env[k] }, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want an error with %q", tc.args, tc.env, err, tc.want)
		}
	}
	// A server that does not answer: serve does not start.
	model := llmtest.NewServer(t)
	model.ScriptEmbedding(func(llmtest.EmbeddingRequest) llmtest.Reply { return llmtest.Fail(401) })
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"), "--embedder", "openai"}
	err := run(context.Background(), args, func(k string) string { return map[string]string{"OPENAI_BASE_URL": model.BaseURL()}[k] },
		strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "embeddings model text-embedding-3-small") {
		t.Fatalf("serve with an embedder that refuses: %v", err)
	}
}
