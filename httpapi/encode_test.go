package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/agentmem/agentmem"
)

// TestEncodeSelf: a context written as it marshals itself is byte for
// byte what encode writes (json.Marshal, which checks and compacts it
// again), in each format, with text that JSON escapes.
func TestEncodeSelf(t *testing.T) {
	text := "a <b>&</b> \"quote\" \\ \u2028 \u2029 \x01 é 😀 \xff"
	tel := agentmem.Telemetry{BudgetTokens: 100, UsedTokens: 42, Sections: map[string]int{"messages": 40, "input": 2},
		Memories: []string{text}, OmittedSeqs: []agentmem.SeqRange{{From: 1, To: 3}}, Warnings: []string{text}}
	msgs := []agentmem.ChatMessage{
		{Role: "system", Content: text},
		{Role: "assistant", ToolCalls: []agentmem.ToolCall{{ID: "c1", Type: "function", Function: agentmem.FunctionCall{Name: "f", Arguments: `{"x":"<1>"}`}}}},
		{Role: "tool", Content: text, ToolCallID: "c1"},
	}
	log := slog.New(slog.DiscardHandler)
	for _, c := range []*agentmem.Context{
		{Format: agentmem.FormatMessages, Messages: msgs, Telemetry: tel},
		{Format: agentmem.FormatMessages, Telemetry: tel}, // no messages: []
		{Format: agentmem.FormatResponses, Instructions: text, Input: text, Telemetry: tel},
		{Format: agentmem.FormatText, Text: text, Telemetry: tel},
	} {
		want, self := httptest.NewRecorder(), httptest.NewRecorder()
		encode(want, httptest.NewRequest("POST", "/", nil), log, 200, c)
		encodeSelf(self, httptest.NewRequest("POST", "/", nil), log, 200, c)
		w, s := body(t, want), body(t, self)
		if !bytes.Equal(w, s) {
			t.Errorf("%s:\nencode     %s\nencodeSelf %s", c.Format, w, s)
		}
		if self.Header().Get("Content-Type") != "application/json" || self.Code != 200 || !json.Valid(s) ||
			self.Header().Get("Content-Length") != strconv.Itoa(len(s)) {
			t.Errorf("%s: %d, Content-Type %q, Content-Length %q of %d bytes, valid %v", c.Format, self.Code,
				self.Header().Get("Content-Type"), self.Header().Get("Content-Length"), len(s), json.Valid(s))
		}
	}
}

func body(t *testing.T, w *httptest.ResponseRecorder) []byte {
	t.Helper()
	b, err := io.ReadAll(w.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
