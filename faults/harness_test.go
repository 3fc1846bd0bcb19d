package faults_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentmem/agentmem/internal/testutil"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", to read the database directly
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// binDir holds the binary that Binary builds, removed by TestMain.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentmem-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// LongEnv is the environment variable that turns on the suite's long
// tests: AGENTMEM_FAULTS=1. An environment variable rather than a test
// flag, so that `go test ./...`, whose other packages define no such
// flag, can carry it; ./test and .ci/run set it.
const LongEnv = "AGENTMEM_FAULTS"

// Long skips tb, saying why, unless AGENTMEM_FAULTS=1: the tests that
// build the binary, put it under load for seconds on each backend, soak
// it, or wait out connect timeouts, and take most of `go test ./...`'s
// time. The quick ones (the model's faults, in process) run always.
func Long(tb testing.TB) {
	tb.Helper()
	if os.Getenv(LongEnv) != "1" {
		tb.Skipf("long fault test: runs with %s=1 (./test and .ci/run set it)", LongEnv)
	}
}

// build builds cmd/agentmem once per test process, on first use, so that
// a run that selects no test of the suite builds nothing.
var build = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "agentmem")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agentmem/agentmem/cmd/agentmem")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/agentmem: %v\n%s", err, out)
	}
	return bin, nil
})

// Binary returns the path of the agentmem binary, built from this tree
// once per test process.
func Binary(tb testing.TB) string {
	tb.Helper()
	bin, err := build()
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// Agentmem runs the binary with args (`keys create …`, say), in the
// environment serve gets (serveEnv), and returns what it printed on
// stdout, without the trailing newline; it fails tb if the command
// fails, with what it printed on stderr.
func Agentmem(tb testing.TB, args ...string) string {
	tb.Helper()
	cmd := exec.Command(Binary(tb), args...)
	cmd.Env = serveEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("agentmem %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSuffix(stdout.String(), "\n")
}

// Backend is a database a test runs serve on: an SQLite file or a fresh
// PostgreSQL schema.
type Backend struct {
	Name string // "sqlite" or "postgresql", as the figures name it
	// DB is serve's --db: sqlite:PATH, or a postgres:// DSN whose
	// search_path selects the test's own schema.
	DB string
	// Driver and DSN open the same database with database/sql (drivers
	// "sqlite" and "pgx"), for the checks that read it directly.
	Driver, DSN string
}

// SQLite reports whether b is the SQLite backend.
func (b Backend) SQLite() bool { return b.Driver == "sqlite" }

// Open opens b's database with database/sql, closed when tb ends. On
// SQLite, open it only while serve is stopped, or for reads.
func (b Backend) Open(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open(b.Driver, b.DSN)
	if err != nil {
		tb.Fatalf("open %s: %v", b.Name, err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Backends runs test as two subtests, one after the other (never side by
// side: the machine is small, and each run loads it fully): "SQLite" on a
// new file, and "PostgreSQL" on a new schema of the AGENTMEM_TEST_POSTGRES
// database, dropped when the subtest ends. Without that variable the
// PostgreSQL run is skipped, or fails on CI (testutil.PostgresDSN).
func Backends(t *testing.T, test func(t *testing.T, b Backend)) {
	t.Run("SQLite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "agentmem.db")
		test(t, Backend{Name: "sqlite", DB: "sqlite:" + path, Driver: "sqlite", DSN: "file:" + path + "?_pragma=busy_timeout(10000)"})
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		test(t, PostgreSQL(t))
	})
}

// PostgreSQL returns the PostgreSQL backend on a new schema of the
// AGENTMEM_TEST_POSTGRES database, dropped when tb ends, after the
// servers' cleanups (registered later) have stopped them. Without that
// variable tb is skipped, or fails on CI (testutil.PostgresDSN). It is
// what Backends runs its "PostgreSQL" subtest on, and what a test that
// needs several processes on one database (TestReplicas) runs on alone.
func PostgreSQL(tb testing.TB) Backend {
	tb.Helper()
	dsn := testutil.MustCreateSchema(tb)
	return Backend{Name: "postgresql", DB: dsn, Driver: "pgx", DSN: dsn}
}

// Server is `agentmem serve` running as a child process, which the test
// kills, stops and restarts on the same database and address.
type Server struct {
	// URL is where it serves, http://127.0.0.1:PORT: the same after a
	// restart, so that clients reconnect as they would to a real one.
	URL string

	tb     testing.TB
	db     string
	args   []string // serve's arguments but --addr
	addr   string   // 127.0.0.1:0 until the first start, then its port
	logDir string
	starts int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	state  *os.ProcessState
}

// serveEnv is the environment of serve: the test's, without the variables
// that would configure it (a model, an API key, AGENTMEM_* settings), so
// that it talks to no one but the test and uses only its flags.
func serveEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, p := range []string{"AGENTMEM_", "OPENAI_", "AZURE_OPENAI_"} {
			if strings.HasPrefix(kv, p) {
				return true
			}
		}
		return false
	})
}

// StartServe runs `agentmem serve --addr 127.0.0.1:0 --db DB --log-level
// warn EXTRA…` and waits for the `listening on http://…` line it prints
// on stdout. Its stderr goes to a file under tb's temp dir, one per
// start, logged when tb fails. The process is killed when tb ends, if
// it still runs.
func StartServe(tb testing.TB, db string, extraArgs ...string) *Server {
	tb.Helper()
	s := &Server{
		tb:     tb,
		db:     db,
		args:   append([]string{"--db", db, "--log-level", "warn"}, extraArgs...),
		addr:   "127.0.0.1:0",
		logDir: tb.TempDir(),
	}
	tb.Cleanup(func() {
		s.mu.Lock()
		cmd, exited := s.cmd, s.exited
		s.mu.Unlock()
		if cmd != nil {
			select {
			case <-exited:
			default:
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		if tb.Failed() {
			s.logStderr()
		}
	})
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// start starts a new process of s and waits until it listens.
func (s *Server) start() error {
	bin := Binary(s.tb)
	s.starts++
	stderr, err := os.Create(filepath.Join(s.logDir, fmt.Sprintf("serve-%d.stderr", s.starts)))
	if err != nil {
		return err
	}
	defer stderr.Close() // the child has its own descriptor
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", s.addr}, s.args...)...)
	cmd.Env = serveEnv()
	cmd.Stdout, cmd.Stderr = pw, stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("start serve: %w", err)
	}
	pw.Close()
	exited := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.exited, s.state = cmd, exited, nil
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait() // its ProcessState tells how it exited
		s.mu.Lock()
		s.state = cmd.ProcessState
		s.mu.Unlock()
		close(exited)
	}()

	lines := make(chan string, 1)
	go func() {
		defer pr.Close()
		r := bufio.NewReader(pr)
		line, err := r.ReadString('\n')
		if err != nil {
			line = ""
		}
		lines <- line
		_, _ = io.Copy(io.Discard, r) // nothing else is printed; never block the child
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("serve (start %d) printed no address within 30 s; stderr:\n%s", s.starts, s.stderr(s.starts))
	}
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok {
		<-exited
		return fmt.Errorf("serve (start %d) printed %q, want listening on http://ADDR (%v); stderr:\n%s", s.starts, line, s.ExitState(), s.stderr(s.starts))
	}
	s.URL = u
	s.addr = strings.TrimPrefix(u, "http://")
	return nil
}

// Restart starts the server again on the same database and address (it
// must have exited: Kill or Term first), and returns how long it took
// from starting the process until /readyz answered 200: the time to
// recover. The address is retried for a few seconds if the old process's
// socket still holds it.
func (s *Server) Restart(ctx context.Context) time.Duration {
	s.tb.Helper()
	begin := time.Now()
	var err error
	for try := 0; ; try++ {
		if err = s.start(); err == nil || try == 20 || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		s.tb.Fatal(err)
	}
	if err := s.WaitReady(ctx); err != nil {
		s.tb.Fatal(err)
	}
	return time.Since(begin)
}

// WaitReady polls /readyz until it answers 200 (the store answers), or
// ctx ends.
func (s *Server) WaitReady(ctx context.Context) error {
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/readyz", nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("/readyz: not ready before the deadline (last: %v)", err)
		case <-s.exitedChan():
			return fmt.Errorf("serve exited (%v) before /readyz answered", s.ExitState())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (s *Server) exitedChan() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

// PID is the process ID of the server's current process (it changes
// with each restart): the workers of serve name themselves in the leases
// they take HOST-PID-RANDOM (worker.Pool.Owner), by which a test tells
// the jobs of one replica from another's.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd.Process.Pid
}

// Pause stops the server with SIGSTOP, as a long stall would (a VM
// paused, a process starved of CPU): it keeps its connections, its
// database transactions and its leases, and does nothing until Resume
// or Kill. It returns once the process is stopped (on Linux, as
// /proc/PID/stat says; elsewhere after 50 ms), so that what the test
// reads meanwhile (the jobs it holds, say) stays as it is.
func (s *Server) Pause() {
	s.tb.Helper()
	s.signal(syscall.SIGSTOP)
	stat := fmt.Sprintf("/proc/%d/stat", s.PID())
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // no /proc: give the signal time
			return
		}
		// pid (comm) state …: comm may hold spaces and parentheses.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
	}
	s.tb.Fatalf("serve (pid %d) is not stopped 2 s after SIGSTOP", s.PID())
}

// Resume continues a server that Pause stopped (SIGCONT).
func (s *Server) Resume() {
	s.tb.Helper()
	s.signal(syscall.SIGCONT)
}

// signal sends sig to the server's process, which must still run.
func (s *Server) signal(sig syscall.Signal) {
	s.tb.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("%v serve: %v", sig, err)
	}
}

// Kill kills the server with SIGKILL, as a crash or the OOM killer
// would, and waits for it to be gone.
func (s *Server) Kill() {
	s.tb.Helper()
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.tb.Fatalf("kill serve: %v", err)
	}
	<-exited
}

// Term sends SIGTERM and waits for the server to exit, at most wait (then
// it is killed, and Term fails the test). It returns the exit code (-1
// if a signal ended it) and how long the server took to exit.
func (s *Server) Term(wait time.Duration) (code int, took time.Duration) {
	s.tb.Helper()
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	begin := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.tb.Fatalf("SIGTERM serve: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-exited
		s.tb.Fatalf("serve did not exit within %v of SIGTERM", wait)
	}
	return s.ExitState().ExitCode(), time.Since(begin)
}

// ExitState is how the last process exited (nil while it runs).
func (s *Server) ExitState() *os.ProcessState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// stderr returns what start n wrote on stderr.
func (s *Server) stderr(n int) string {
	b, _ := os.ReadFile(filepath.Join(s.logDir, fmt.Sprintf("serve-%d.stderr", n)))
	return string(b)
}

// logStderr logs the end of each start's stderr.
func (s *Server) logStderr() {
	for n := 1; n <= s.starts; n++ {
		out := s.stderr(n)
		if out == "" {
			continue
		}
		if len(out) > 8<<10 {
			out = "…" + out[len(out)-8<<10:]
		}
		s.tb.Logf("serve start %d, stderr:\n%s", n, out)
	}
}

// Client calls the REST API of a Server. Connection errors come back as
// errors, HTTP statuses as they are: retrying is the caller's decision.
type Client struct {
	URL  string
	HTTP *http.Client
}

// NewClient returns a client of url whose connections are not shared
// with other clients; requests time out after 20 s.
func NewClient(url string) *Client {
	return &Client{URL: url, HTTP: &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext},
	}}
}

// Do sends a request with a JSON body (none when body is nil) and the
// given headers (name, value pairs), and decodes a 2xx answer into out
// when out is not nil. It returns the status and the body read; status 0
// when the connection broke before the answer's end.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, headers ...string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		// The connection broke mid-answer (the server was killed while
		// writing it): no answer, as a refused connection is none (status
		// 0, Transient), whatever status its first line said.
		return 0, b, fmt.Errorf("%s %s: the answer (status %d) ended early: %w", method, path, resp.StatusCode, err)
	}
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, b, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return resp.StatusCode, b, nil
}

// Retrying is c.Do retried while the server is away (a connection
// error, 502-504) or busy (429), with a short back-off, until it answers
// otherwise or ctx ends; then it returns as c.Do does.
func (c *Client) Retrying(ctx context.Context, method, path string, body, out any, headers ...string) (int, []byte, error) {
	for try := 0; ; try++ {
		status, b, err := c.Do(ctx, method, path, body, out, headers...)
		if !Transient(status, err) || ctx.Err() != nil {
			return status, b, err
		}
		select {
		case <-ctx.Done():
			return status, b, err
		case <-time.After(Backoff(try)):
		}
	}
}

// Transient reports whether a request that got status and err is worth
// retrying as it is: the server was not there, or was going away (a
// connection error, status 0), or said to come back (429, 502, 503,
// 504).
func Transient(status int, err error) bool {
	if err != nil {
		return status == 0
	}
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Backoff is the wait before retry number try (from 0): 20 ms doubling
// up to 200 ms.
func Backoff(try int) time.Duration {
	return min(20*time.Millisecond<<min(try, 4), 200*time.Millisecond)
}

// List reads every page of a list route (path with its query, without
// cursor), retrying as Retrying does.
func List[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	var all []T
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for cursor := ""; ; {
		var page struct {
			Data       []T    `json:"data"`
			NextCursor string `json:"next_cursor"`
		}
		p := path
		if cursor != "" {
			p += sep + "cursor=" + cursor
		}
		status, b, err := c.Retrying(ctx, http.MethodGet, p, nil, &page)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %s", p, status, b)
		}
		all = append(all, page.Data...)
		if cursor = page.NextCursor; cursor == "" {
			return all, nil
		}
	}
}

// Job is what GET /v1/jobs says of a background job.
type Job struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Kind       string     `json:"kind"`
	Key        string     `json:"key"`
	Status     string     `json:"status"`
	Attempts   int        `json:"attempts"`
	LeaseOwner string     `json:"lease_owner"`
	LeaseUntil *time.Time `json:"lease_until"`
	LastError  string     `json:"last_error"`
}

// WaitJobs waits until the server has no job queued or running (the
// background work of what was written is done), polling GET /v1/jobs,
// until ctx ends. It needs two empty polls in a row, since a job that
// finishes may enqueue another.
func WaitJobs(ctx context.Context, c *Client) error {
	empty := 0
	var last []Job
	for empty < 2 {
		var active []Job
		for _, status := range []string{"queued", "running"} {
			var page struct{ Data []Job }
			code, b, err := c.Retrying(ctx, http.MethodGet, "/v1/jobs?limit=10&status="+status, nil, &page)
			if err != nil {
				return err
			} else if code != http.StatusOK {
				return fmt.Errorf("GET /v1/jobs: %d %s", code, b)
			}
			active = append(active, page.Data...)
		}
		if len(active) == 0 {
			empty++
		} else {
			empty, last = 0, active
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("background jobs still active at the deadline: %+v", last)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// Durations summarises measured durations for the figures.
type Durations []time.Duration

// Stats returns the minimum, median and maximum in milliseconds (zeros
// when there are none).
func (d Durations) Stats() (minMS, medianMS, maxMS int64) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	s := slices.Sorted(slices.Values(d))
	return s[0].Milliseconds(), s[len(s)/2].Milliseconds(), s[len(s)-1].Milliseconds()
}
