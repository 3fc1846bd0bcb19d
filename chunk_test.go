package agentmem_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmem/agentmem"
)

// TestChunkText: a chunk's text is its turns', "name: content" (the role
// when there is no name) one a line, without tool and system messages or
// turns without content, cut to MaxChunkBytes at a character's start.
func TestChunkText(t *testing.T) {
	msgs := []*agentmem.Message{
		{Role: agentmem.RoleSystem, Content: "Be brief."},
		{Role: agentmem.RoleUser, Name: "Caroline", Content: "I painted a sunset."},
		{Role: agentmem.RoleAssistant, ToolCalls: []agentmem.ToolCall{{ID: "c1", Type: "function", Function: agentmem.FunctionCall{Name: "weather"}}}},
		{Role: agentmem.RoleTool, ToolCallID: "c1", Content: "rain"},
		{Role: agentmem.RoleAssistant, Content: "Lovely!\nWhere?"},
	}
	if got, want := agentmem.ChunkText(msgs), "Caroline: I painted a sunset.\nassistant: Lovely!\nWhere?"; got != want {
		t.Errorf("ChunkText = %q, want %q", got, want)
	}
	if got := agentmem.ChunkText(msgs[:1]); got != "" {
		t.Errorf("ChunkText(no turn) = %q, want empty", got)
	}
	long := []*agentmem.Message{
		{Role: agentmem.RoleUser, Content: strings.Repeat("a", agentmem.MaxChunkBytes-22)},
		{Role: agentmem.RoleAssistant, Content: strings.Repeat("€", 100)},
		{Role: agentmem.RoleUser, Content: "never reached"},
	}
	got := agentmem.ChunkText(long)
	// "user: " and the a's, "\nassistant: " (12) leave 4 bytes: one €.
	if want := "user: " + long[0].Content + "\nassistant: €"; got != want || !utf8.ValidString(got) {
		t.Errorf("ChunkText(long) ends %q (%d bytes), want %q (%d)", got[len(got)-20:], len(got), want[len(want)-20:], len(want))
	}
}
