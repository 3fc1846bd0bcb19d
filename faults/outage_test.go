package faults_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/app"
	"github.com/agentmem/agentmem/internal/testutil"
	"github.com/agentmem/agentmem/postgres"
	"github.com/agentmem/agentmem/sqlite"
	"github.com/agentmem/agentmem/worker"
)

// Modes of a tcpProxy.
const (
	proxyUp        = iota // forwards
	proxyRefuse           // resets each new connection at once, as a closed port does
	proxyBlackhole        // accepts new connections and never answers
)

// tcpProxy forwards the TCP connections it accepts on 127.0.0.1 to
// target; Cut closes every connection and stops forwarding new ones
// until Restore.
type tcpProxy struct {
	target string
	ln     net.Listener
	addr   string

	mu    sync.Mutex
	mode  int
	conns map[net.Conn]bool // open, both sides of each forwarded connection and those held
	wg    sync.WaitGroup
}

// newTCPProxy starts a proxy to target, closed when the test ends.
func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{target: target, ln: ln, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
		p.wg.Wait()
	})
	return p
}

func (p *tcpProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		switch mode {
		case proxyRefuse:
			p.mu.Unlock()
			c.(*net.TCPConn).SetLinger(0) // a reset, as a refused port answers
			c.Close()
			continue
		case proxyBlackhole:
			p.conns[c] = true
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward copies between c and a new connection to the target.
func (p *tcpProxy) forward(c net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.mode != proxyUp { // cut while dialling
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// Cut closes every connection and answers new ones as mode says.
func (p *tcpProxy) Cut(mode int) {
	p.mu.Lock()
	p.mode = mode
	p.mu.Unlock()
	p.closeAll()
}

// Restore forwards new connections again (closing those held).
func (p *tcpProxy) Restore() {
	p.mu.Lock()
	p.mode = proxyUp
	p.mu.Unlock()
	p.closeAll()
}

func (p *tcpProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// proxiedDSN returns dsn with its host replaced by addr.
func proxiedDSN(t *testing.T, dsn, addr string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	q := u.Query()
	q.Set("pool_max_conns", "4")
	u.RawQuery = q.Encode()
	return u.String()
}

// batchMarker returns a word found in no other batch: "mk" and the
// letters of w and i.
func batchMarker(w, i int) string {
	b := []byte("mk")
	for _, n := range []int{w, i} {
		b = append(b, byte('a'+n/26%26), byte('a'+n%26))
	}
	return string(b)
}

// markedBatch is the w-th writer's i-th append: a turn naming its
// batchMarker.
func markedBatch(w, i int) map[string]any {
	m := batchMarker(w, i)
	return map[string]any{"messages": []map[string]string{
		{"role": "user", "content": fmt.Sprintf("Batch %s: I pack the tent and the paddles for the kayak trip, item %d.", m, i)},
		{"role": "assistant", "content": fmt.Sprintf("Noted %s: the tent and the paddles are packed.", m)},
	}}
}

// outageLoad is a light load on agentmem, writers appending batches each
// in a thread of its own user (an Idempotency-Key each, sent again until
// it is acknowledged, as a client retries) and building a context after
// each, while the test cuts the database. Requests that start or end
// while outage is true are counted as the outage's.
type outageLoad struct {
	s       *inproc
	writers int

	outage atomic.Bool
	stop   atomic.Bool

	mu         sync.Mutex
	during     int            // requests that met the outage
	statuses   map[string]int // their outcomes: the status, or "timeout"/"error"
	maxFail    time.Duration  // the longest of their failures
	slowest    string         // that failure
	noRetry    int            // 503s without Retry-After
	acked      []int          // batches acknowledged, per writer
	restored   time.Time      // when the database came back (zero before)
	recovered  time.Duration  // from restored to the first append acknowledged after it
	retried    int            // appends sent again after a failure
	badOutside []string       // failures while the database was up
}

func (l *outageLoad) record(a httpAnswer, during bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	outcome := fmt.Sprint(a.status)
	if a.err != nil {
		outcome = "error"
		if strings.Contains(a.err.Error(), "Timeout") {
			outcome = "timeout"
		}
	}
	if !during {
		if a.err != nil || a.status >= 300 {
			l.badOutside = append(l.badOutside, a.String())
		}
		return
	}
	l.during++
	l.statuses[outcome]++
	if (a.err != nil || a.status >= 300) && a.took > l.maxFail {
		l.maxFail, l.slowest = a.took, a.String()
	}
	if a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") == "" {
		l.noRetry++
	}
}

// run runs the writers until stop, each finishing the batch it began
// (within 30 s).
func (l *outageLoad) run(user func(w int) string) {
	l.statuses = map[string]int{}
	l.acked = make([]int, l.writers)
	var wg sync.WaitGroup
	for w := range l.writers {
		wg.Go(func() {
			base := "/v1/users/" + user(w) + "/threads/t"
			for i := 0; !l.stop.Load(); i++ {
				deadline := time.Now().Add(30 * time.Second)
				for try := 0; ; try++ {
					during := l.outage.Load()
					a := l.s.do(http.MethodPost, base+"/messages", markedBatch(w, i), "Idempotency-Key", fmt.Sprintf("w%d-b%d", w, i))
					l.record(a, during || l.outage.Load())
					if a.err == nil && a.status == http.StatusCreated {
						l.mu.Lock()
						if !l.restored.IsZero() && l.recovered == 0 {
							l.recovered = time.Since(l.restored)
						}
						l.acked[w]++
						l.retried += min(try, 1)
						l.mu.Unlock()
						break
					}
					if time.Now().After(deadline) {
						return
					}
					time.Sleep(50 * time.Millisecond) // sooner than Retry-After asks, to keep the test short
				}
				during := l.outage.Load()
				a := l.s.do(http.MethodPost, base+"/context", map[string]any{"budget_tokens": contextBudget, "input": "What is packed?"})
				l.record(a, during || l.outage.Load())
			}
		})
	}
	wg.Wait()
}

// verify checks each writer's thread: every batch acknowledged stored
// once, in order, seqs without gaps, and found by search (indexed).
func (l *outageLoad) verify(t *testing.T, user func(w int) string) (stored, duplicated, lost int) {
	t.Helper()
	for w := range l.writers {
		a := l.s.must(http.StatusOK, http.MethodGet, "/v1/users/"+user(w)+"/threads/t/messages?limit=1000", nil)
		msgs := decodeAs[struct{ Data []agentmem.Message }](t, a.body).Data
		seen := map[string]int{}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("writer %d: seq %d at position %d: a gap", w, m.Seq, i+1)
			}
			if m.Role == agentmem.RoleUser {
				seen[strings.TrimSuffix(strings.Fields(m.Content)[1], ":")]++
			}
		}
		stored += len(msgs)
		for i := range l.acked[w] {
			switch n := seen[batchMarker(w, i)]; {
			case n == 0:
				lost++
				t.Errorf("writer %d: batch %d acknowledged, not stored", w, i)
			case n > 1:
				duplicated++
				t.Errorf("writer %d: batch %d stored %d times", w, i, n)
			}
		}
		if len(msgs) != 2*l.acked[w] {
			t.Errorf("writer %d: %d messages stored, want %d (2 for each batch acknowledged)", w, len(msgs), 2*l.acked[w])
		}
		for i := range l.acked[w] {
			res := decodeAs[agentmem.SearchResponse](t, l.s.must(http.StatusOK, http.MethodPost, "/v1/users/"+user(w)+"/search",
				map[string]any{"query": batchMarker(w, i), "scopes": []string{"messages"}}).body)
			if len(res.Results) == 0 {
				lost++
				t.Errorf("writer %d: batch %d stored but not indexed (search does not find it)", w, i)
			}
		}
	}
	return stored, duplicated, lost
}

// allJobs waits until no job of any user is queued or running, at most
// within, and returns how many are done and dead.
func (s *inproc) allJobs(within time.Duration) (done, dead []agentmem.Job) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	list := func(status string) []agentmem.Job {
		a := s.must(http.StatusOK, http.MethodGet, "/v1/jobs?limit=1000&status="+status, nil)
		return decodeAs[struct{ Data []agentmem.Job }](s.t, a.body).Data
	}
	for {
		busy := len(list(agentmem.JobQueued)) + len(list(agentmem.JobRunning))
		if busy == 0 {
			return list(agentmem.JobDone), list(agentmem.JobDead)
		}
		if time.Now().After(deadline) {
			for _, st := range []string{agentmem.JobQueued, agentmem.JobRunning} {
				for _, j := range list(st) {
					s.t.Logf("%s %s job of %s: attempts %d, lease until %v, last error %q", st, j.Kind, j.UserID, j.Attempts, j.LeaseUntil, j.LastError)
				}
			}
			for line := range strings.Lines(s.logs.String()) {
				if strings.Contains(line, "job") {
					s.t.Log("agentmem log: " + line)
				}
			}
			s.t.Fatalf("after %v, %d jobs still queued or running", within, busy)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOutage_PostgreSQL: PostgreSQL goes away under a light load of
// appends and context builds (the connections between agentmem and it
// cut, new ones refused, or accepted and never answered), then comes
// back. Meanwhile requests fail fast with 503 and Retry-After, never 500
// or a hang, and /readyz is 503; afterwards agentmem recovers by itself:
// /readyz is 200 again, the appends sent again with their
// Idempotency-Key are stored once each, without gaps, and every job
// drains, none dead, so that every acknowledged batch is indexed.
func TestOutage_PostgreSQL(t *testing.T) {
	Long(t)
	for _, tc := range []struct {
		name string
		mode int
	}{{"Refused", proxyRefuse}, {"Blackholed", proxyBlackhole}} {
		t.Run(tc.name, func(t *testing.T) {
			testOutagePostgres(t, tc.name, tc.mode)
		})
	}
}

func testOutagePostgres(t *testing.T, name string, mode int) {
	dsn := testutil.MustCreateSchema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, u.Host)
	// Requests must answer well within the client's timeout: a hang shows
	// as a timeout, not as a slow success.
	s := openInproc(t, app.Config{
		DB:         proxiedDSN(t, dsn, proxy.addr),
		JobBackoff: worker.ExponentialBackoff(50*time.Millisecond, 200*time.Millisecond),
		JobPoll:    20 * time.Millisecond,
	}, 10*time.Second)
	user := func(w int) string { return fmt.Sprint("u", w) }
	l := &outageLoad{s: s, writers: 3}
	for w := range l.writers {
		s.must(http.StatusCreated, http.MethodPost, "/v1/users/"+user(w)+"/threads", map[string]string{"id": "t"})
	}
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		l.run(user)
	}()

	time.Sleep(500 * time.Millisecond) // a gap: the load runs a while before the outage
	l.outage.Store(true)
	proxy.Cut(mode)
	cut := time.Now()
	var readyMax time.Duration
	readyStatuses := map[int]int{}
	// Long enough for requests begun during it to fail: with the database
	// silent, each waits its connect timeout (3 s) before its 503.
	minOutage := 2 * time.Second
	if mode == proxyBlackhole {
		minOutage = 5 * time.Second
	}
	for first := true; first || time.Since(cut) < minOutage; first = false {
		a := s.do(http.MethodGet, "/readyz", nil)
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
			t.Errorf("/readyz during the outage: %v, Retry-After %q; want 503 with Retry-After", a, a.header.Get("Retry-After"))
		}
		readyStatuses[a.status]++
		readyMax = max(readyMax, a.took)
		time.Sleep(200 * time.Millisecond)
	}
	outageMs := time.Since(cut).Milliseconds()
	proxy.Restore()
	l.outage.Store(false)
	restored := time.Now()
	l.mu.Lock()
	l.restored = restored
	l.mu.Unlock()
	for {
		a := s.do(http.MethodGet, "/readyz", nil)
		if a.err == nil && a.status == http.StatusOK {
			break
		}
		if time.Since(restored) > 10*time.Second {
			t.Fatalf("/readyz %v 10 s after PostgreSQL came back", a)
		}
		time.Sleep(10 * time.Millisecond)
	}
	readyMs := time.Since(restored).Milliseconds()
	// The load goes on for at least 500 ms after PostgreSQL came back, and
	// until an append has been acknowledged since (l.recovered, checked
	// below), for at most 10 s.
	for deadline := restored.Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		recovered := l.recovered != 0
		l.mu.Unlock()
		if recovered && time.Since(restored) >= 500*time.Millisecond {
			break
		}
	}
	l.stop.Store(true)
	<-loaded

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.during == 0 || l.statuses["503"] == 0 {
		t.Fatalf("no request met the outage: %v", l.statuses)
	}
	for outcome, n := range l.statuses {
		if outcome != "503" && outcome != "201" && outcome != "200" {
			t.Errorf("%d requests during the outage answered %s, want 503 (or success)", n, outcome)
		}
	}
	if l.noRetry > 0 {
		t.Errorf("%d answers 503 without Retry-After", l.noRetry)
	}
	// A refused connection fails at once; a silent database after the
	// connect timeout (3 s), which a request may meet twice (a connection
	// lost mid-request, then a new one that does not answer).
	failBound := 5 * time.Second
	if mode == proxyBlackhole {
		failBound = 2*postgres.DefaultConnectTimeout + time.Second
	}
	if l.maxFail > failBound {
		t.Errorf("a request took %v to fail during the outage, want less than %v: %s", l.maxFail, failBound, l.slowest)
	}
	if l.recovered == 0 {
		t.Error("no append was acknowledged after PostgreSQL came back")
	}
	if len(l.badOutside) > 0 {
		t.Errorf("%d requests failed while PostgreSQL was up, the first: %s", len(l.badOutside), l.badOutside[0])
	}
	done, dead := s.allJobs(20 * time.Second)
	for _, j := range dead {
		t.Errorf("dead %s job of %s: %q", j.Kind, j.UserID, j.LastError)
	}
	stored, duplicated, lost := l.verify(t, user)
	acked := 0
	for _, n := range l.acked {
		acked += n
	}
	t.Logf("faults: outage postgres %s: writers=%d outage_ms=%d requests_during=%d statuses_during=%s max_fail_ms=%d readyz_during=%s readyz_max_ms=%d ready_after_ms=%d recovered_ms=%d batches_acked=%d appends_retried=%d messages_stored=%d jobs_done=%d jobs_dead=%d lost=%d duplicated=%d",
		name, l.writers, outageMs, l.during, countList(l.statuses), l.maxFail.Milliseconds(), countList(readyStatuses), readyMax.Milliseconds(), readyMs, l.recovered.Milliseconds(),
		acked, l.retried, stored, len(done), len(dead), lost, duplicated)
}

// countList writes counts by status as status:n,… in order.
func countList[K cmp.Ordered](counts map[K]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%v:%d", k, counts[k]))
	}
	return strings.Join(parts, ",")
}

// TestOutage_SQLiteDiskFull: the disk of a SQLite store fills up (the
// file held at its size with PRAGMA max_page_count, as a full disk holds
// it) under appends. Appends then fail at once with 503, Retry-After and
// a message naming the full disk; what was stored stays readable (the
// messages, search, /readyz, contexts) and the file passes
// integrity_check. Once space is freed, without a restart, the refused
// appends sent again with their Idempotency-Key are stored once each,
// without gaps, and every job drains: the jobs that died of the full disk
// (see below) are done once retried, and every batch is indexed.
func TestOutage_SQLiteDiskFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentmem.db")
	var raw *sqlite.Store
	s := openInproc(t, app.Config{
		DB:         "sqlite:" + path,
		WrapStore:  func(st agentmem.Store) agentmem.Store { raw = st.(*sqlite.Store); return st },
		JobBackoff: worker.ExponentialBackoff(50*time.Millisecond, 200*time.Millisecond),
		JobPoll:    20 * time.Millisecond,
	}, 10*time.Second)
	const user = "alice"
	base := "/v1/users/" + user + "/threads/t"
	s.must(http.StatusCreated, http.MethodPost, "/v1/users/"+user+"/threads", map[string]string{"id": "t"})
	appendBatch := func(i int) httpAnswer {
		return s.do(http.MethodPost, base+"/messages", markedBatch(0, i), "Idempotency-Key", fmt.Sprint("b", i))
	}
	const before = 10
	for i := range before {
		if a := appendBatch(i); a.err != nil || a.status != http.StatusCreated {
			t.Fatalf("append %d: %v", i, a)
		}
	}
	s.allJobs(10 * time.Second)

	pages, err := raw.SetMaxPageCount(ctx, 1) // at most the file's size: nothing may grow it
	if err != nil {
		t.Fatal(err)
	}
	full := time.Now()
	next, refusedFrom, tries, retryAfter := before, -1, 0, ""
	var failMax time.Duration
	for ; tries < 500 && refusedFrom < 0; tries++ {
		a := appendBatch(next)
		switch {
		case a.err == nil && a.status == http.StatusCreated:
			next++ // the free pages of the file took it
		case a.err == nil && a.status == http.StatusServiceUnavailable:
			refusedFrom, failMax, retryAfter = next, a.took, a.header.Get("Retry-After")
			if retryAfter == "" || !strings.Contains(string(a.body), "disk is full") {
				t.Fatalf("append while full: %v, Retry-After %q; want the message to name the full disk, and Retry-After", a, a.header.Get("Retry-After"))
			}
		default:
			t.Fatalf("append while full: %v, want 201 or 503", a)
		}
	}
	if refusedFrom < 0 {
		t.Fatalf("%d appends after the disk filled, none refused", tries)
	}
	// The disk stays full: each of the next appends is refused too, at
	// once; what was stored is read as before.
	refused := 1
	for range 5 {
		a := appendBatch(next)
		if a.err != nil || a.status != http.StatusServiceUnavailable {
			t.Fatalf("append while full: %v, want 503", a)
		}
		refused++
		failMax = max(failMax, a.took)
	}
	readStatus := map[string]int{}
	for _, r := range []struct {
		name, method, path string
		body               any
	}{
		{"messages", http.MethodGet, base + "/messages?limit=1000", nil},
		{"search", http.MethodPost, "/v1/users/" + user + "/search", map[string]any{"query": batchMarker(0, 0)}},
		{"context", http.MethodPost, base + "/context", map[string]any{"budget_tokens": contextBudget, "input": "What is packed?"}},
		{"readyz", http.MethodGet, "/readyz", nil},
	} {
		a := s.do(r.method, r.path, r.body)
		readStatus[r.name] = a.status
		if a.err != nil || a.status != http.StatusOK {
			t.Errorf("%s while the disk is full: %v, want 200", r.name, a)
		}
	}
	msgs := decodeAs[struct{ Data []agentmem.Message }](t, s.must(http.StatusOK, http.MethodGet, base+"/messages?limit=1000", nil).body).Data
	if len(msgs) != 2*next {
		t.Fatalf("%d messages readable while full, want the %d acknowledged", len(msgs), 2*next)
	}
	integrity := integrityCheck(t, path)
	// The disk stays full a while longer, as the workers index what was
	// stored while it filled.
	time.Sleep(time.Second - time.Since(full))
	fullMs := time.Since(full).Milliseconds()

	// Space is freed: the refused appends, sent again, are stored.
	if _, err := raw.SetMaxPageCount(ctx, 0); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	var recovered time.Duration
	for i := next; i < next+3; i++ {
		a := appendBatch(i)
		if a.err != nil || a.status != http.StatusCreated {
			t.Fatalf("append %d once space is freed: %v", i, a)
		}
		if recovered == 0 {
			recovered = time.Since(freed)
		}
	}
	l := &outageLoad{s: s, writers: 1, acked: []int{next + 3}}
	// The jobs that ran while the disk was full could claim (an update in
	// place needs no new page) but not write: each was handed back, its
	// attempt not counted (agentmem.ErrStoreDown), so none is dead
	// however long the disk stayed full, and all are done now that it
	// has room, without an operator.
	done, dead := s.allJobs(20 * time.Second)
	for _, j := range dead {
		t.Errorf("dead %s job after the disk was full: %q", j.Kind, j.LastError)
	}
	stored, duplicated, lost := l.verify(t, func(int) string { return user })
	if after := integrityCheck(t, path); after != "ok" {
		t.Errorf("integrity_check after the disk was freed: %s", after)
	}
	handedBack, jobFailures := 0, 0
	for line := range strings.Lines(s.logs.String()) {
		switch {
		case strings.Contains(line, `msg="job handed back: the store is unavailable"`):
			handedBack++
		case strings.Contains(line, "disk is full") && (strings.Contains(line, `msg="job failed"`) || strings.Contains(line, `msg="job dead"`)):
			jobFailures++
		}
	}
	if jobFailures > 0 {
		t.Errorf("%d job runs were counted as failed for the full disk: a store outage is not the job's fault", jobFailures)
	}
	t.Logf("faults: outage sqlite disk-full: max_page_count=%d acked_before=%d acked_while_filling=%d refused=%d status=503 retry_after=%s max_fail_ms=%d reads_while_full=%s integrity_while_full=%s full_ms=%d job_runs_handed_back=%d job_runs_failed_full=%d recovered_ms=%d messages_stored=%d jobs_done=%d jobs_dead=%d lost=%d duplicated=%d",
		pages, before, next-before, refused, retryAfter, failMax.Milliseconds(), countList(readStatus), integrity, fullMs, handedBack, jobFailures, recovered.Milliseconds(),
		stored, len(done), len(dead), lost, duplicated)
}

// integrityCheck runs PRAGMA integrity_check on the SQLite file at path,
// on a read-only connection of its own, and returns its answer ("ok").
func integrityCheck(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		t.Fatal(err)
	}
	if res != "ok" {
		t.Errorf("integrity_check: %s", res)
	}
	return res
}
