package faults_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// LoadConfig says what a Load does. Its zero fields take the defaults of
// DefaultLoad.
type LoadConfig struct {
	Users          int // users u0, u1…
	ThreadsPerUser int // threads t0, t1… of each user
	// Writers append batches of 1 to 3 messages to random threads, each
	// batch with its own Idempotency-Key, retried with that key until
	// acknowledged; each sends at most MaxBatches batches, pausing
	// Pause to 2×Pause between them.
	Writers    int
	MaxBatches int
	Pause      time.Duration
	// Others build contexts, search and (one time in eight) end threads,
	// pausing 2×Pause to 4×Pause between requests.
	Others int
}

// DefaultLoad is the load of the suite: 29 writers over 12 threads of 4
// users, and 3 other clients, 32 clients in all (the most the machines
// that run the suite, 2 cores shared, are asked to bear).
var DefaultLoad = LoadConfig{Users: 4, ThreadsPerUser: 3, Writers: 29, MaxBatches: 400, Pause: 20 * time.Millisecond, Others: 3}

// facts are what the users say about themselves, each user its own and
// none contradicting another, so that the memories they learn are a known
// set: a statement repeated by many batches (and indexed again after a
// crash) must be one memory.
var facts = []string{
	"I love hiking.",
	"My daughter is Maria.",
	"I have a dog named Rex.",
	"I play the violin.",
	"I don't like sushi.",
}

// Batch is one append of the load: its messages' contents each begin
// with a token unique in the run ("w03-0012-1: …"), by which the checks
// find them.
type Batch struct {
	User, Thread, Key string
	Tokens            []string
	Contents          []string
	Roles             []string
	// Acked is set once a 201 answered the batch; Seqs are the seqs it
	// gave its messages, and Via the URL of the server that answered it
	// (one of the load's, see StartLoadOn).
	Acked bool
	Seqs  []int64
	Via   string
	// Attempts counts the requests sent for it; Failed those that got a
	// connection error or a transient status before one was answered.
	Attempts, Failed int
}

// Outcomes counts what the requests of a Load got.
type Outcomes struct {
	OK          atomic.Int64 // 2xx
	ConnErrors  atomic.Int64 // no answer: refused, reset, EOF
	Unavailable atomic.Int64 // 503, and 429, 502, 504
	Unexpected  atomic.Int64 // anything else: each one also fails the test
	Gone        atomic.Int64 // 404 for a user the test erased (Load.Erasing)
}

// Load is concurrent traffic against a Server, or several serving one
// database (replicas): writers whose every batch is recorded in a ledger,
// and clients that read and end threads.
type Load struct {
	tb      testing.TB
	cfg     LoadConfig
	clients []*Client // one per URL of the load

	stop     chan struct{} // closed by Stop: no new batches or reads
	finish   context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	batches  []*Batch
	Writes   Outcomes // of the writers' requests
	Reads    Outcomes // of the other clients' requests
	AtMark   Outcomes // of the writers' requests in flight at a Mark
	marks    []time.Time
	problems []string        // unexpected answers, reported by Stop
	erased   map[string]bool // users the test erases (Erasing)
}

// ThreadRef names a thread of the load.
type ThreadRef struct {
	UserIndex    int
	User, Thread string
}

// UserID is the ID of the load's user number u.
func UserID(u int) string { return fmt.Sprintf("u%d", u) }

// Threads returns the threads of cfg.
func (cfg LoadConfig) Threads() []ThreadRef {
	var out []ThreadRef
	for u := range cfg.Users {
		for t := range cfg.ThreadsPerUser {
			out = append(out, ThreadRef{u, UserID(u), fmt.Sprintf("t%d", t)})
		}
	}
	return out
}

// StartLoad creates the threads of cfg on the server at url (retrying
// while it is away), then starts the writers and the other clients. ctx
// bounds the whole load, the writers' last retries included; Stop ends
// it.
func StartLoad(ctx context.Context, tb testing.TB, url string, cfg LoadConfig) *Load {
	tb.Helper()
	return StartLoadOn(ctx, tb, []string{url}, cfg)
}

// StartLoadOn is StartLoad over several servers of one database, as
// clients behind a load balancer: writer (or other client) number i
// sends to urls[i % len(urls)] and, when a request fails with a
// connection error or a transient status, sends its retry (with the
// same Idempotency-Key) to the next URL, and keeps to that one. So every
// thread is written through every server at once, and a batch that one
// server left unanswered is stored through another. The threads are
// created through urls[0].
func StartLoadOn(ctx context.Context, tb testing.TB, urls []string, cfg LoadConfig) *Load {
	tb.Helper()
	if len(urls) == 0 {
		tb.Fatal("StartLoadOn: no URL")
	}
	l := &Load{tb: tb, cfg: cfg, stop: make(chan struct{})}
	for _, u := range urls {
		l.clients = append(l.clients, NewClient(u))
	}
	l.finish, l.cancel = context.WithCancel(ctx)
	tb.Cleanup(l.cancel)
	for _, ut := range cfg.Threads() {
		status, b, err := l.clients[0].Retrying(ctx, http.MethodPost, "/v1/users/"+ut.User+"/threads", map[string]any{"id": ut.Thread, "agent_id": "agent"}, nil)
		if err != nil || status != http.StatusCreated {
			tb.Fatalf("create thread %s/%s: %d %s %v", ut.User, ut.Thread, status, b, err)
		}
	}
	for w := range cfg.Writers {
		l.wg.Go(func() { l.write(w) })
	}
	for o := range cfg.Others {
		l.wg.Go(func() { l.other(o) })
	}
	return l
}

// Stop stops the load: writers send no new batch, but retry the one they
// are on until it is acknowledged (or the load's ctx ends); the other
// clients stop. It waits for them, then fails tb for every unexpected
// answer seen.
func (l *Load) Stop() {
	l.tb.Helper()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, p := range l.problems {
		if i == 20 {
			l.tb.Errorf("… and %d more unexpected answers", len(l.problems)-i)
			break
		}
		l.tb.Error(p)
	}
}

// Batches returns the ledger: every batch the writers began.
func (l *Load) Batches() []*Batch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.batches
}

func (l *Load) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (l *Load) problem(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

// Mark records this moment (say, when a signal is sent to the server):
// the writers' requests in flight at a mark, sent before it and answered
// after it, are counted in AtMark as well.
func (l *Load) Mark() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.marks = append(l.marks, time.Now())
}

// Erasing tells the load that the test is about to erase user (DELETE
// /v1/users/USER): from now on the clients leave the user's threads
// alone, and the requests in flight for them that get 404 count in
// Outcomes.Gone rather than as unexpected.
func (l *Load) Erasing(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.erased == nil {
		l.erased = map[string]bool{}
	}
	l.erased[user] = true
}

// isErased reports whether Erasing was called for user.
func (l *Load) isErased(user string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.erased[user]
}

// pick returns a random thread of threads whose user is not erased (any
// thread when all are).
func (l *Load) pick(r *rand.Rand, threads []ThreadRef) ThreadRef {
	i := r.IntN(len(threads))
	for k := range threads {
		if ut := threads[(i+k)%len(threads)]; !l.isErased(ut.User) {
			return ut
		}
	}
	return threads[i]
}

// gone reports whether an answer is a 404 for a user the test erased,
// counting it in os.
func (l *Load) gone(user string, status int, err error, os ...*Outcomes) bool {
	if err != nil || status != http.StatusNotFound || !l.isErased(user) {
		return false
	}
	for _, o := range os {
		o.Gone.Add(1)
	}
	return true
}

// spansMark reports whether a mark lies between start and end.
func (l *Load) spansMark(start, end time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.marks {
		if m.After(start) && !m.After(end) {
			return true
		}
	}
	return false
}

// count records the outcome of one request in each of os, and reports
// whether it is worth retrying. An outcome other than a 2xx, a
// connection error or a transient status (Transient) is a problem,
// reported by Stop, unless the load's ctx ended.
func (l *Load) count(what string, status int, body []byte, err error, os ...*Outcomes) (retry bool) {
	var n func(o *Outcomes) *atomic.Int64
	switch {
	case err == nil && status/100 == 2:
		n = func(o *Outcomes) *atomic.Int64 { return &o.OK }
	case Transient(status, err) && status == 0:
		n, retry = func(o *Outcomes) *atomic.Int64 { return &o.ConnErrors }, true
	case Transient(status, err):
		n, retry = func(o *Outcomes) *atomic.Int64 { return &o.Unavailable }, true
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return false // the load's own end
	default:
		n = func(o *Outcomes) *atomic.Int64 { return &o.Unexpected }
		l.problem("%s: status %d, body %.300s, err %v", what, status, body, err)
	}
	for _, o := range os {
		n(o).Add(1)
	}
	return retry
}

// write is writer w: batches to random threads until Stop or MaxBatches.
func (l *Load) write(w int) {
	r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
	server := w % len(l.clients)
	threads := l.cfg.Threads()
	for n := 0; n < l.cfg.MaxBatches && !l.stopped() && l.finish.Err() == nil; n++ {
		ut := l.pick(r, threads)
		b := &Batch{User: ut.User, Thread: ut.Thread, Key: fmt.Sprintf("w%02d-%04d", w, n)}
		for i := range 1 + r.IntN(3) {
			token := fmt.Sprintf("%s-%d", b.Key, i)
			role, text := "user", "Tell me more about it."
			if i%2 == 1 {
				role, text = "assistant", "Noted."
			} else if r.IntN(3) == 0 {
				text = facts[(ut.UserIndex+r.IntN(2))%len(facts)] // two facts per user
			}
			b.Tokens, b.Roles, b.Contents = append(b.Tokens, token), append(b.Roles, role), append(b.Contents, token+": "+text)
		}
		l.mu.Lock()
		l.batches = append(l.batches, b)
		l.mu.Unlock()
		l.send(b, &server)
		select {
		case <-l.stop:
		case <-time.After(l.cfg.Pause + rand.N(l.cfg.Pause+1)):
		}
	}
}

// send appends b through the client *server, retrying with its key
// while the server is away (through the next client, when the load has
// several), until it is acknowledged or the load's ctx ends.
func (l *Load) send(b *Batch, server *int) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Seq     int64  `json:"seq,omitempty"`
	}
	req := struct {
		Messages []message `json:"messages"`
	}{}
	for i := range b.Tokens {
		req.Messages = append(req.Messages, message{Role: b.Roles[i], Content: b.Contents[i]})
	}
	path := "/v1/users/" + b.User + "/threads/" + b.Thread + "/messages"
	for try := 0; l.finish.Err() == nil; try++ {
		var resp struct {
			Messages []message `json:"messages"`
		}
		b.Attempts++
		start := time.Now()
		c := l.clients[*server]
		status, body, err := c.Do(l.finish, http.MethodPost, path, req, &resp, "Idempotency-Key", b.Key)
		counts := []*Outcomes{&l.Writes}
		if l.spansMark(start, time.Now()) {
			counts = append(counts, &l.AtMark)
		}
		if l.gone(b.User, status, err, counts...) {
			return
		}
		if l.count("append "+b.Key, status, body, err, counts...) {
			b.Failed++
			*server = (*server + 1) % len(l.clients)
			select {
			case <-l.finish.Done():
			case <-time.After(Backoff(try)):
			}
			continue
		}
		if err != nil || status != http.StatusCreated {
			return // counted as unexpected, or the load's end
		}
		if len(resp.Messages) != len(b.Tokens) {
			l.problem("append %s: %d messages acknowledged, want %d", b.Key, len(resp.Messages), len(b.Tokens))
			return
		}
		for i, m := range resp.Messages {
			if m.Content != b.Contents[i] {
				l.problem("append %s: message %d acknowledged as %q, want %q", b.Key, i, m.Content, b.Contents[i])
			}
			b.Seqs = append(b.Seqs, m.Seq)
		}
		l.mu.Lock()
		b.Acked, b.Via = true, c.URL
		l.mu.Unlock()
		return
	}
}

// other is other client o: contexts, searches and thread ends.
func (l *Load) other(o int) {
	r := rand.New(rand.NewPCG(uint64(1000+o), uint64(time.Now().UnixNano())))
	threads := l.cfg.Threads()
	server := o % len(l.clients)
	for !l.stopped() && l.finish.Err() == nil {
		c := l.clients[server]
		ut := l.pick(r, threads)
		base := "/v1/users/" + ut.User
		var what string
		var status int
		var body []byte
		var err error
		switch n := r.IntN(8); {
		case n == 0:
			what = "end " + ut.User + "/" + ut.Thread
			status, body, err = c.Do(l.finish, http.MethodPost, base+"/threads/"+ut.Thread+"/end", nil, nil)
		case n < 5:
			// A small budget, so that contexts ask for summaries.
			what = "context " + ut.User + "/" + ut.Thread
			status, body, err = c.Do(l.finish, http.MethodPost, base+"/threads/"+ut.Thread+"/context",
				map[string]any{"input": "What do you know about me?", "budget_tokens": 600, "model": "gpt-4o"}, nil)
		default:
			what = "search " + ut.User
			status, body, err = c.Do(l.finish, http.MethodPost, base+"/search",
				map[string]any{"query": strings.TrimSuffix(facts[r.IntN(len(facts))], "."), "scopes": []string{"memories", "messages", "chunks", "summaries"}}, nil)
		}
		if l.gone(ut.User, status, err, &l.Reads) {
			continue
		}
		if l.count(what, status, body, err, &l.Reads) {
			server = (server + 1) % len(l.clients)
		}
		select {
		case <-l.stop:
		case <-time.After(2*l.cfg.Pause + rand.N(2*l.cfg.Pause+1)):
		}
	}
}
