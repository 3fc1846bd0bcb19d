package entity_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/goldenfile"
)

var ctx = context.Background()

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name+".golden"), got, *update)
}

// turns are a thread's first messages: seqs 1 to 5.
var turns = []*agentmem.Message{
	{Seq: 1, Role: agentmem.RoleUser, Content: "Hi! We just moved to Porto, my wife Ana and I. I live in Porto now, near the river."},
	{Seq: 2, Role: agentmem.RoleAssistant, Content: "Welcome to Porto! Do you need restaurant tips?"},
	{Seq: 3, Role: agentmem.RoleTool, Content: `{"restaurants": []}`},
	{Seq: 4, Role: agentmem.RoleUser, Name: "ana", Content: "Yes please, we are both vegetarian."},
	{Seq: 5, Role: agentmem.RoleAssistant, Content: ""},
}
