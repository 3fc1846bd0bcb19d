package client_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/client"
)

// TestClient_ReusesConnections: calls one after the other share one
// connection, also when the answer is large (a context of hundreds of
// messages, whose last read leaves the newline after the JSON).
func TestClient_ReusesConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("and then? ", 20_000) + `"}],"telemetry":{}}` + "\n"))
	}))
	t.Cleanup(srv.Close)
	var dials atomic.Int64
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c := client.New(srv.URL, &http.Client{Transport: tr})
	for range 10 {
		if _, err := c.BuildContext(t.Context(), "alice", "t", agentmem.ContextRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("10 calls dialled %d connections, want 1", n)
	}
}
