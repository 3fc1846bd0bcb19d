package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/httpapi"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/llm/llmtest"
	"github.com/agentmem/agentmem/llm/openai"
	"github.com/agentmem/agentmem/worker"
)

// inproc is agentmem opened in process (app.Open) behind its real REST
// handler on an httptest.Server, and a client whose timeout bounds every
// request.
type inproc struct {
	t    *testing.T
	mem  *app.App
	url  string
	hc   *http.Client
	logs *testutil.LogBuffer
}

// openInproc opens agentmem with cfg (its Log replaced by one the test
// reads), serves its REST API, and closes both when the test ends.
func openInproc(t *testing.T, cfg app.Config, timeout time.Duration) *inproc {
	t.Helper()
	log, logs := testutil.NewLog()
	cfg.Log = log
	mem, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	srv := httptest.NewServer(httpapi.NewHandler(log, mem.Service, httpapi.Options{}))
	t.Cleanup(srv.Close)
	return &inproc{t: t, mem: mem, url: srv.URL, hc: &http.Client{Timeout: timeout}, logs: logs}
}

// httpAnswer is one request's outcome.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
	err    error // the client's: no answer within its timeout, or no connection
}

func (a httpAnswer) String() string {
	if a.err != nil {
		return fmt.Sprintf("error after %v: %v", a.took.Round(time.Millisecond), a.err)
	}
	return fmt.Sprintf("%d after %v: %s", a.status, a.took.Round(time.Millisecond), bytes.TrimSpace(a.body))
}

// do sends a request with body (JSON-encoded unless nil) and the header
// pairs kv.
func (s *inproc) do(method, path string, body any, kv ...string) httpAnswer {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	start := time.Now()
	resp, err := s.hc.Do(req)
	if err != nil {
		return httpAnswer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return httpAnswer{status: resp.StatusCode, header: resp.Header, body: b, err: err, took: time.Since(start)}
}

// must sends a request that must answer want.
func (s *inproc) must(want int, method, path string, body any, kv ...string) httpAnswer {
	s.t.Helper()
	a := s.do(method, path, body, kv...)
	if a.err != nil || a.status != want {
		s.t.Fatalf("%s %s: %v, want %d", method, path, a, want)
	}
	return a
}

// decodeAs decodes a JSON body.
func decodeAs[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// turn is a user message and the assistant's reply.
func tripTurn(i int) map[string]any {
	return map[string]any{"messages": []map[string]string{
		{"role": "user", "content": fmt.Sprintf("Turn %d: I am planning a kayak trip to Lisbon with Maria and need a packing list for day %d.", i, i)},
		{"role": "assistant", "content": fmt.Sprintf("For day %d bring a dry bag, sunscreen, water and a light jacket; Maria could bring the map.", i)},
	}}
}

// jobs lists a user's jobs with the given status.
func (s *inproc) jobs(user, status string) []agentmem.Job {
	s.t.Helper()
	a := s.must(http.StatusOK, http.MethodGet, "/v1/users/"+user+"/jobs?limit=100&status="+status, nil)
	return decodeAs[struct{ Data []agentmem.Job }](s.t, a.body).Data
}

// The model's settings in these tests: each of agentmem's model calls
// gives up after modelTimeout (the fake's hang lasts until then), is
// retried once, and three failures in a row open a client's circuit
// breaker for breakerCooldown; a query waits queryTimeout for its vector;
// failed jobs wait 50 to 200 ms. Every request of the tests' client must
// answer within requestTimeout, a third of modelTimeout: a request that
// waited on the model would fail.
const (
	modelTimeout    = 3 * time.Second
	breakerCooldown = time.Second
	queryTimeout    = 250 * time.Millisecond
	requestTimeout  = time.Second
	contextBudget   = 300
)

// modelConfig is agentmem on a new SQLite file with fake as its chat
// model and its embedder, set up as the constants above say.
func modelConfig(t *testing.T, fake *llmtest.Server) app.Config {
	return app.Config{
		DB: "sqlite:" + filepath.Join(t.TempDir(), "agentmem.db"),
		Getenv: func(k string) string {
			return map[string]string{"OPENAI_BASE_URL": fake.BaseURL(), "OPENAI_API_KEY": "test"}[k]
		},
		LLMModel: "fake-chat", Embedder: "openai", EmbedModel: "fake-embedding", QueryEmbedTimeout: queryTimeout,
		ModelClient: func(c *openai.Config) {
			c.Timeout, c.MaxRetries = modelTimeout, 1
			c.RetryBaseDelay, c.RetryMaxDelay = 10*time.Millisecond, 50*time.Millisecond
			c.BreakerThreshold, c.BreakerCooldown = 3, breakerCooldown
		},
		ChunkTurns: 4,
		JobBackoff: worker.ExponentialBackoff(50*time.Millisecond, 200*time.Millisecond),
		JobPoll:    20 * time.Millisecond,
	}
}

// healthyModel answers each prompt of the memory pipeline as a model
// would; describe answers the chunk descriptions.
func healthyModel(describe llmtest.Reply) func(llmtest.ChatCompletionRequest) llmtest.Reply {
	return func(req llmtest.ChatCompletionRequest) llmtest.Reply {
		p := req.LastUserMessage()
		switch {
		case strings.HasPrefix(p, "You extract long-term memories"):
			return llmtest.Text(`{"memories": []}`)
		case strings.HasPrefix(p, "You describe a passage"):
			return describe
		case strings.HasPrefix(p, "You keep track of the things"):
			return llmtest.Text(`{"entities": [{"name": "Lisbon", "type": "place", "aliases": [], "action": "discussed", "seq": 1}]}`)
		case strings.HasPrefix(p, "You reflect on"):
			return llmtest.Text(`{"reflection_flag": "no-insight", "insights": [], "topics": ["kayak"]}`)
		case strings.HasPrefix(p, "You keep the profile"):
			return llmtest.Text("Alice is planning a kayak trip to Lisbon.")
		case strings.HasPrefix(p, "You are updating a conversation summary"):
			return llmtest.Text("Alice is planning a kayak trip to Lisbon with Maria and packing for it.")
		}
		return llmtest.DefaultReply(req)
	}
}

// waitJobs waits until the user has no job queued or running, at most
// within, and returns the user's jobs by status.
func (s *inproc) waitJobs(user string, within time.Duration) map[string][]agentmem.Job {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		by := map[string][]agentmem.Job{}
		for _, st := range []string{agentmem.JobQueued, agentmem.JobRunning, agentmem.JobDone, agentmem.JobDead} {
			by[st] = s.jobs(user, st)
		}
		if len(by[agentmem.JobQueued])+len(by[agentmem.JobRunning]) == 0 {
			return by
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %v, jobs still queued %d, running %d", within, len(by[agentmem.JobQueued]), len(by[agentmem.JobRunning]))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// contextTelemetry is what the tests read of a built context.
type contextTelemetry struct {
	Telemetry agentmem.Telemetry `json:"telemetry"`
}

// TestModel_Outage: with the model (chat and embeddings) failing, hanging
// or answering garbage, agentmem keeps serving. Appends and context
// builds answer at once (within a third of the model's timeout; nothing
// on the request path waits on the model), contexts stay within their
// budget, trimmed while the summary cannot be written; the jobs that need
// the model retry with back-off, then are dead letters whose last error
// names the model; the circuit breakers open (calls fail fast, saying
// so). Once the model is back, the breakers close after their cooldown:
// the dead jobs, retried, are done, and search has its vectors again.
func TestModel_Outage(t *testing.T) {
	Long(t)
	for _, tc := range []struct {
		name  string
		fault llmtest.Reply
	}{
		{"Error500", llmtest.Fail(http.StatusInternalServerError)},
		{"RateLimited429", llmtest.RateLimited("1")},
		{"Hang", llmtest.Hang()},
		{"MalformedJSON", llmtest.Malformed()},
		{"NotJSON", llmtest.NotJSON()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testModelOutage(t, tc.name, tc.fault)
		})
	}
}

func testModelOutage(t *testing.T, name string, fault llmtest.Reply) {
	fake := llmtest.NewServer(t)
	fake.Script(healthyModel(llmtest.Text(`{"summary": "Packing for a kayak trip.", "topics": ["kayak"], "entities": ["Lisbon"]}`)))
	s := openInproc(t, modelConfig(t, fake), requestTimeout)
	const user, thread = "alice", "trip"
	base := "/v1/users/" + user + "/threads/" + thread
	s.must(http.StatusCreated, http.MethodPost, "/v1/users/"+user+"/threads", map[string]string{"id": thread})
	for i := 1; i <= 4; i++ {
		s.must(http.StatusCreated, http.MethodPost, base+"/messages", tripTurn(i), "Idempotency-Key", fmt.Sprint("turn-", i))
	}
	s.waitJobs(user, 10*time.Second)

	// The outage: appends, each followed by a context build for the next
	// input, as an agent loop makes them; then the thread ends.
	fake.Down(fault)
	down := time.Now()
	before := len(fake.Requests())
	var appendMax, contextMax time.Duration
	usedMax, behind, requests := 0, false, 0
	for i := 5; i <= 16; i++ {
		a := s.must(http.StatusCreated, http.MethodPost, base+"/messages", tripTurn(i), "Idempotency-Key", fmt.Sprint("turn-", i))
		appendMax = max(appendMax, a.took)
		a = s.must(http.StatusOK, http.MethodPost, base+"/context", map[string]any{"budget_tokens": contextBudget, "input": "What should Maria pack for the kayak trip?"})
		contextMax = max(contextMax, a.took)
		tel := decodeAs[contextTelemetry](t, a.body).Telemetry
		if tel.UsedTokens > contextBudget || tel.BudgetTokens != contextBudget {
			t.Fatalf("context %d: used %d of %d tokens, want at most %d", i, tel.UsedTokens, tel.BudgetTokens, contextBudget)
		}
		usedMax, behind, requests = max(usedMax, tel.UsedTokens), behind || tel.SummaryBehind, requests+2
	}
	if !behind {
		t.Error("no context of the outage was trimmed while its summary was behind")
	}
	s.must(http.StatusOK, http.MethodPost, base+"/end", nil)
	requests++
	jobs := s.waitJobs(user, 30*time.Second)
	deadMs := time.Since(down).Milliseconds()
	dead := jobs[agentmem.JobDead]
	if len(dead) == 0 {
		t.Fatal("no job is dead after the model failed each of its attempts")
	}
	kinds := map[string]int{}
	for _, j := range dead {
		kinds[j.Kind]++
		if j.Attempts != j.MaxAttempts || !strings.Contains(j.LastError, "model") {
			t.Errorf("dead %s job: attempts %d of %d, last error %q; want all its attempts and an error naming the model", j.Kind, j.Attempts, j.MaxAttempts, j.LastError)
		}
	}
	if kinds["reflect"] == 0 {
		t.Errorf("dead jobs %v: the reflection of the thread ended during the outage is not among them", kinds)
	}
	ref := decodeAs[agentmem.Reflection](t, s.must(http.StatusOK, http.MethodGet, base+"/reflection", nil).body)
	if ref.Status != agentmem.ReflectionFailed || !strings.Contains(ref.Reason, "model") {
		t.Errorf("reflection %s: %q; want failed, naming the model", ref.Status, ref.Reason)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "consecutive calls failed") {
		t.Error("no call failed fast: the circuit breakers never opened")
	}
	if !strings.Contains(logs, `msg="job failed"`) || !strings.Contains(logs, "retry_in=") {
		t.Error("no job was retried with a back-off before it died")
	}
	modelRequests := len(fake.Requests()) - before

	// The model is back: once the breakers' cooldown has passed, a trial
	// call closes each; the dead jobs, retried as an operator would, are
	// done, and queries have their vectors again.
	fake.Up()
	up := time.Now()
	time.Sleep(breakerCooldown) // a gap: the breakers' cooldown expires
	for _, j := range dead {
		s.must(http.StatusOK, http.MethodPost, "/v1/users/"+user+"/jobs/"+j.ID+"/retry", nil)
	}
	jobs = s.waitJobs(user, 20*time.Second)
	if n := len(jobs[agentmem.JobDead]); n != 0 {
		for _, j := range jobs[agentmem.JobDead] {
			t.Errorf("dead again after the model came back: %s job, %q", j.Kind, j.LastError)
		}
		t.FailNow()
	}
	recovered := time.Since(up)
	var res agentmem.SearchResponse
	for i := 0; ; i++ { // the queries' breaker closes at the first query after its cooldown
		res = decodeAs[agentmem.SearchResponse](t, s.must(http.StatusOK, http.MethodPost, "/v1/users/"+user+"/search", map[string]any{"query": "kayak trip"}).body)
		if slices.Contains(res.Signals, "vector") || i == 3 {
			break
		}
		time.Sleep(breakerCooldown / 4)
	}
	if !slices.Contains(res.Signals, "vector") || len(res.Warnings) != 0 {
		t.Errorf("search after the model came back: signals %v, warnings %q; want the vector signal, no warning", res.Signals, res.Warnings)
	}
	tel := decodeAs[contextTelemetry](t, s.must(http.StatusOK, http.MethodPost, base+"/context", map[string]any{"budget_tokens": contextBudget}).body).Telemetry
	if tel.IndexLag != 0 {
		t.Errorf("index lag %d after the retried jobs are done, want 0", tel.IndexLag)
	}
	t.Logf("faults: model %s: requests_during=%d append_max_ms=%d context_max_ms=%d used_max=%d budget=%d summary_behind=%t model_requests_during=%d dead=%d dead_kinds=%s dead_after_ms=%d breaker_opened=true recovered_ms=%d cooldown_ms=%d lost=0",
		name, requests, appendMax.Milliseconds(), contextMax.Milliseconds(), usedMax, contextBudget, behind, modelRequests, len(dead), kindList(kinds), deadMs, recovered.Milliseconds(), breakerCooldown.Milliseconds())
}

// kindList writes kinds as kind:n,kind:n in kind order.
func kindList(kinds map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, kinds[k]))
	}
	return strings.Join(parts, ",")
}

// TestModel_ChunkDescriptionNotJSON: a model that answers the chunk
// descriptions with text that is not JSON (and everything else well)
// does not fail the index jobs: every chunk is stored, described by the
// heuristics (an extractive summary, the turns' topics and names), and a
// warning says why.
func TestModel_ChunkDescriptionNotJSON(t *testing.T) {
	fake := llmtest.NewServer(t)
	const garbage = "Sure! This passage is about a kayak trip. Let me know if you need anything else."
	fake.Script(healthyModel(llmtest.Text(garbage)))
	s := openInproc(t, modelConfig(t, fake), requestTimeout)
	const user, thread = "alice", "trip"
	base := "/v1/users/" + user + "/threads/" + thread
	s.must(http.StatusCreated, http.MethodPost, "/v1/users/"+user+"/threads", map[string]string{"id": thread})
	const turns = 8 // user and assistant turns: four chunks of modelConfig's four
	for i := 1; i <= turns/2; i++ {
		s.must(http.StatusCreated, http.MethodPost, base+"/messages", tripTurn(i), "Idempotency-Key", fmt.Sprint("turn-", i))
	}
	jobs := s.waitJobs(user, 20*time.Second)
	for _, j := range jobs[agentmem.JobDead] {
		t.Errorf("dead %s job: %q", j.Kind, j.LastError)
	}
	chunks, err := s.mem.Store().FindChunks(context.Background(), user, thread)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != turns/4 {
		t.Fatalf("%d chunks, want %d", len(chunks), turns/4)
	}
	described := 0
	for _, c := range chunks {
		if c.Summary == "" || strings.Contains(c.Summary, "Sure!") || len(c.Topics) == 0 || !slices.Contains(c.Entities, "Lisbon") {
			t.Errorf("chunk %d-%d: summary %q, topics %v, entities %v; want the heuristic description", c.SeqFrom, c.SeqTo, c.Summary, c.Topics, c.Entities)
		}
		described++
	}
	asked := 0
	for _, r := range fake.ChatRequests() {
		if strings.HasPrefix(r.LastUserMessage(), "You describe a passage") {
			asked++
		}
	}
	if asked < len(chunks) {
		t.Errorf("the model was asked for %d descriptions, want at least %d", asked, len(chunks))
	}
	if !strings.Contains(s.logs.String(), "answer malformed; describing heuristically") {
		t.Error("no warning says the descriptions are heuristic")
	}
	t.Logf("faults: model chunk-description-not-json: chunks=%d described_heuristically=%d model_asked=%d index_jobs_done=%d dead=%d",
		len(chunks), described, asked, len(jobs[agentmem.JobDone]), len(jobs[agentmem.JobDead]))
}
