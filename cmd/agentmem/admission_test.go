package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestServe_Admission: serve bounds the searches, imports and exports
// that run at once as --admit-search and --admit-bulk say, by default
// one search per CPU and one import or export per two, and reports the
// bounds in /metrics.
func TestServe_Admission(t *testing.T) {
	for _, tt := range []struct {
		name         string
		args         []string
		search, bulk int
	}{
		{"Default", nil, runtime.GOMAXPROCS(0), max(runtime.GOMAXPROCS(0)/2, 1)},
		{"Set", []string{"--admit-search", "3", "--admit-bulk", "2", "--admit-wait", "0"}, 3, 2},
		{"NoBound", []string{"--admit-search", "-1", "--admit-bulk", "-1"}, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := MustServe(t, filepath.Join(t.TempDir(), "agentmem.db"), tt.args...)
			resp, err := http.Get(srv.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			for work, n := range map[string]int{"search": tt.search, "bulk": tt.bulk} {
				if want := fmt.Sprintf("agentmem_admission_limit{work=%q} %d\n", work, n); !strings.Contains(string(b), want) {
					t.Errorf("/metrics lacks %q", want)
				}
			}
		})
	}
}
