package faults_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// replicaCount is how many serve processes TestReplicas runs on one
// database.
const replicaCount = 3

// endRounds is how many times TestReplicas ends every thread through
// every replica at once: a round takes under a second, and a race
// between the ends need not show in every round.
const endRounds = 3

// visibilityBound is how soon a memory written through one replica must
// be found by a search on the others.
const visibilityBound = time.Second

// Rate limit of TestReplicas/RateLimit's replicas, and the requests it
// sends each at once.
const (
	replicaRate  = 5
	replicaBurst = 5
	rateRequests = 20
)

// TestReplicas runs three serve processes on one PostgreSQL schema, each
// with its own port and --job-lease 10s, as a deployment behind a load
// balancer would, and spreads the suite's load over them (StartLoadOn).
// It proves that appends to the same threads through different replicas
// stay gap-free and ordered, each acknowledged batch stored exactly once;
// that each background job runs once per lease (no job claimed twice but
// those of a killed replica, no summary or reflection written twice, one
// reflection per end of a thread ended through the three replicas at
// once); that when a replica is killed (SIGKILL) while it holds jobs, the
// others run them once their lease expires and drain the queue; that a
// memory written through one replica is found by searches on the others
// within a second; and (RateLimit) that the rate limit is each replica's.
// PostgreSQL only: SQLite is single-process by design (one serve per
// file). See the package doc.
func TestReplicas(t *testing.T) {
	Long(t)
	b := PostgreSQL(t)
	ctx, cancel := context.WithTimeout(context.Background(), BackendTimeout)
	defer cancel()
	srvs := make([]*Server, replicaCount)
	var urls []string
	for i := range srvs {
		srvs[i] = StartServe(t, b.DB, "--job-lease", JobLease.String())
		urls = append(urls, srvs[i].URL)
	}
	for _, s := range srvs {
		if err := s.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	db := b.Open(t)
	load := StartLoadOn(ctx, t, urls, DefaultLoad)

	// Replica 1 dies in the middle of jobs; its writers go on through the
	// others.
	sleep(ctx, t, 2*time.Second)
	victim := srvs[1]
	kill := killMidJob(ctx, t, db, victim)
	sleep(ctx, t, 2*time.Second)
	load.Stop()

	recovered := waitRecovered(ctx, t, db, kill)
	c := NewClient(srvs[0].URL)
	if err := WaitJobs(ctx, c); err != nil {
		t.Fatal(err)
	}
	rep := CheckMessages(ctx, t, c, load)
	checkSpread(t, load, urls)
	memories := CheckMemories(ctx, t, c, load.cfg)
	jobs := CheckJobs(t, db)
	WaitReflected(ctx, t, db, 10*time.Second)
	CheckIndex(t, b, db)
	expect := map[JobRef]int{}
	for _, j := range kill.jobs {
		expect[j.ref] = j.attempts + 1
	}
	twice := CheckJobsRunOnce(t, db, expect)
	if t.Failed() {
		t.FailNow() // the parts below would report the same trouble again
	}

	victim.Restart(ctx)
	reflections := 0
	for range endRounds {
		reflections = max(reflections, checkConcurrentEnds(ctx, t, db, b, srvs, load.cfg))
	}
	both, vector := measureVisibility(ctx, t, srvs, load.cfg)
	for _, s := range srvs {
		if code, took := s.Term(20 * time.Second); code != 0 {
			t.Errorf("serve exited with status %d after SIGTERM (took %v), want 0", code, took)
		}
	}

	var allowed []int
	t.Run("RateLimit", func(t *testing.T) { allowed = checkRateLimit(ctx, t, b) })

	_, bothMed, bothMax := both.Stats()
	_, vecMed, vecMax := vector.Stats()
	t.Logf("faults: replicas %s: replicas=%d acknowledged=%d messages=%d lost=%d duplicated=%d retried=%d unacknowledged=%d conn_errors=%d jobs_done=%d jobs_run_twice=%d killed_leased_jobs=%d killed_lease_left_ms=%d kill_to_recovered_ms=%d reflections_per_end=%d search_visible_ms=%d/%d vector_visible_ms=%d/%d rate_limit_allowed=%s rate_limit_sent=%d rate_limit_burst=%d memories=%d",
		b.Name, replicaCount, rep.Acknowledged, rep.Messages, rep.Lost, rep.Duplicated, rep.Retried, rep.Unacknowledged,
		load.Writes.ConnErrors.Load(), jobs["done"], twice, len(kill.jobs), kill.leaseLeft().Milliseconds(), recovered.Milliseconds(), reflections,
		bothMed, bothMax, vecMed, vecMax, joinInts(allowed, "/"), rateRequests, replicaBurst, memories)
}

// sleep waits d, or fails t when ctx ends first.
func sleep(ctx context.Context, t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatal("deadline")
	case <-time.After(d):
	}
}

// checkSpread checks that the load did what TestReplicas means it to: each
// thread has batches acknowledged through every replica.
func checkSpread(t *testing.T, l *Load, urls []string) {
	t.Helper()
	via := map[string]map[string]bool{}
	for _, b := range l.Batches() {
		if b.Acked {
			th := b.User + "/" + b.Thread
			if via[th] == nil {
				via[th] = map[string]bool{}
			}
			via[th][b.Via] = true
		}
	}
	for _, ut := range l.cfg.Threads() {
		th := ut.User + "/" + ut.Thread
		if len(via[th]) != len(urls) {
			t.Errorf("thread %s has batches acknowledged through %d replicas, want all %d", th, len(via[th]), len(urls))
		}
	}
}

// leasedJob is a job a killed replica held.
type leasedJob struct {
	ref        JobRef
	kind, key  string
	owner      string // the killed replica's workers
	attempts   int    // when it was killed
	leaseUntil time.Time
}

// killed is what killMidJob did.
type killed struct {
	at   time.Time // when SIGKILL was sent
	jobs []leasedJob
}

// leaseLeft is how long after the kill the last lease of its jobs
// expired.
func (k killed) leaseLeft() time.Duration {
	var left time.Duration
	for _, j := range k.jobs {
		left = max(left, j.leaseUntil.Sub(k.at))
	}
	return left
}

// ownerPID matches a worker's lease owner, HOST-PID-RANDOM
// (worker.Pool.Owner), and captures its PID.
var ownerPID = regexp.MustCompile(`-(\d+)-[0-9a-f]{8}$`)

// killMidJob kills s with SIGKILL while it holds at least one job: it
// stops s (SIGSTOP) and reads from the database the jobs it has running
// under a lease; if there are none, it lets s go on and tries again a
// little later. A job's completion may have been on its way to the
// database as s stopped: the jobs are read again after the kill, and
// those it finished after all left out; if it finished them all, s is
// restarted and killed again. It returns the jobs s held when it died.
func killMidJob(ctx context.Context, t *testing.T, db *sql.DB, s *Server) killed {
	t.Helper()
	for try := 1; ; try++ {
		if ctx.Err() != nil {
			t.Fatal("deadline: the replica was never killed holding a job")
		}
		s.Pause()
		held := leasedBy(ctx, t, db, s.PID())
		if len(held) == 0 {
			s.Resume()
			sleep(ctx, t, 20*time.Millisecond)
			continue
		}
		at := time.Now()
		s.Kill()
		sleep(ctx, t, 200*time.Millisecond) // what it sent before it stopped is in
		held = slices.DeleteFunc(held, func(j leasedJob) bool {
			var status, owner string
			var attempts int
			if err := db.QueryRowContext(ctx, `SELECT status, lease_owner, attempts FROM jobs WHERE user_id = $1 AND id = $2`,
				j.ref.User, j.ref.ID).Scan(&status, &owner, &attempts); err != nil {
				t.Fatalf("job %s/%s: %v", j.ref.User, j.ref.ID, err)
			}
			return status != "running" && owner == j.owner && attempts == j.attempts
		})
		if len(held) == 0 {
			t.Logf("the replica finished the jobs it held as it was killed: restarting it to kill it again")
			s.Restart(ctx)
			continue
		}
		var desc []string
		for _, j := range held {
			desc = append(desc, fmt.Sprintf("%s %s/%s (attempt %d, lease expiring %d ms after the kill)",
				j.kind, j.ref.User, j.key, j.attempts, j.leaseUntil.Sub(at).Milliseconds()))
		}
		t.Logf("killed a replica (stopped %d times to find it holding jobs) holding %s", try, strings.Join(desc, ", "))
		return killed{at: at, jobs: held}
	}
}

// leasedBy returns the jobs that the workers of process pid hold under a
// lease, as the jobs table has them.
func leasedBy(ctx context.Context, t *testing.T, db *sql.DB, pid int) []leasedJob {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT user_id, id, kind, key, lease_owner, attempts, lease_until FROM jobs
		WHERE status = 'running' AND lease_until > now()`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var held []leasedJob
	for rows.Next() {
		var j leasedJob
		if err := rows.Scan(&j.ref.User, &j.ref.ID, &j.kind, &j.key, &j.owner, &j.attempts, &j.leaseUntil); err != nil {
			t.Fatal(err)
		}
		if m := ownerPID.FindStringSubmatch(j.owner); m != nil && m[1] == strconv.Itoa(pid) {
			held = append(held, j)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return held
}

// waitRecovered waits until every job the killed replica held is done,
// and checks that each was finished by another replica, once its lease
// had expired, claimed once more. It returns how long after the kill the
// last of them was done (by the jobs table's updated_at).
func waitRecovered(ctx context.Context, t *testing.T, db *sql.DB, k killed) time.Duration {
	t.Helper()
	var last time.Time
	for _, j := range k.jobs {
		for {
			var status, owner string
			var attempts int
			var updated time.Time
			err := db.QueryRowContext(ctx, `SELECT status, lease_owner, attempts, updated_at FROM jobs WHERE user_id = $1 AND id = $2`,
				j.ref.User, j.ref.ID).Scan(&status, &owner, &attempts, &updated)
			if err != nil {
				t.Fatalf("job %s/%s of the killed replica: %v", j.ref.User, j.ref.ID, err)
			}
			if status == "done" {
				switch {
				case owner == j.owner:
					t.Errorf("job %s/%s (%s %s) of the killed replica was recorded done by it", j.ref.User, j.ref.ID, j.kind, j.key)
				case updated.Before(j.leaseUntil):
					t.Errorf("job %s/%s (%s %s) of the killed replica was done at %v, before its lease expired (%v): it ran within another's lease",
						j.ref.User, j.ref.ID, j.kind, j.key, updated, j.leaseUntil)
				case attempts != j.attempts+1:
					t.Errorf("job %s/%s (%s %s) of the killed replica was claimed %d times in all, want %d", j.ref.User, j.ref.ID, j.kind, j.key, attempts, j.attempts+1)
				}
				if updated.After(last) {
					last = updated
				}
				break
			}
			if status != "running" && status != "queued" {
				t.Fatalf("job %s/%s (%s %s) of the killed replica is %s (by %s)", j.ref.User, j.ref.ID, j.kind, j.key, status, owner)
			}
			sleep(ctx, t, 20*time.Millisecond)
		}
	}
	took := last.Sub(k.at)
	// The lease expires within JobLease of the kill; another replica's
	// pool looks for due jobs every second.
	if limit := JobLease + 3*time.Second; took > limit {
		t.Errorf("the killed replica's jobs were done %v after the kill, want within %v", took, limit)
	}
	return took
}

// checkConcurrentEnds ends every thread through every replica at once,
// after an append has reopened it, and checks that each end was reflected
// on once: one reflect job per thread (each replica's end used to queue
// one, when the thread ended through another after it had read it), its
// reflection done through its last message, and every job done. It
// returns the most reflect jobs one thread got.
func checkConcurrentEnds(ctx context.Context, t *testing.T, db *sql.DB, b Backend, srvs []*Server, cfg LoadConfig) int {
	t.Helper()
	clients := make([]*Client, len(srvs))
	for i, s := range srvs {
		clients[i] = NewClient(s.URL)
	}
	for i, ut := range cfg.Threads() {
		msgs := map[string]any{"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("end-%d: That is all for today.", i)}}}
		status, body, err := clients[i%len(clients)].Retrying(ctx, http.MethodPost, "/v1/users/"+ut.User+"/threads/"+ut.Thread+"/messages", msgs, nil)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("append to %s/%s: %d %s %v", ut.User, ut.Thread, status, body, err)
		}
	}
	if err := WaitJobs(ctx, clients[0]); err != nil {
		t.Fatal(err)
	}
	reflectJobs := func() map[string]int {
		n := map[string]int{}
		for _, row := range query(t, db, `SELECT user_id, key, count(*) FROM jobs WHERE kind = 'reflect' GROUP BY user_id, key`) {
			c, _ := strconv.Atoi(row[2])
			n[row[0]+"/"+row[1]] = c
		}
		return n
	}
	before := reflectJobs()

	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, ut := range cfg.Threads() {
		for _, c := range clients {
			wg.Go(func() {
				<-start
				var th struct{ Status string }
				status, body, err := c.Do(ctx, http.MethodPost, "/v1/users/"+ut.User+"/threads/"+ut.Thread+"/end", nil, &th)
				if err != nil || status != http.StatusOK || th.Status != "ended" {
					t.Errorf("end %s/%s through %s: %d %s %v", ut.User, ut.Thread, c.URL, status, body, err)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if err := WaitJobs(ctx, clients[0]); err != nil {
		t.Fatal(err)
	}
	after := reflectJobs()
	most := 0
	for _, ut := range cfg.Threads() {
		th := ut.User + "/" + ut.Thread
		n := after[th] - before[th]
		most = max(most, n)
		if n != 1 {
			t.Errorf("thread %s, ended through %d replicas at once, got %d reflect jobs, want 1", th, len(srvs), n)
		}
	}
	CheckJobs(t, db)
	WaitReflected(ctx, t, db, 10*time.Second)
	CheckIndex(t, b, db)
	return most
}

// measureVisibility writes memories through each replica in turn, to the
// load's users (whose vectors every replica has cached: it searches them
// first), and measures how long after the write's 201 a search through
// each other replica finds it: a search of both signals, and one of the
// vector signal alone, which reads the replica's vector cache. Each must
// find it within visibilityBound.
func measureVisibility(ctx context.Context, t *testing.T, srvs []*Server, cfg LoadConfig) (both, vector Durations) {
	t.Helper()
	clients := make([]*Client, len(srvs))
	for i, s := range srvs {
		clients[i] = NewClient(s.URL)
	}
	search := func(c *Client, user, query string, signals []string) ([]string, error) {
		var resp struct {
			Results []struct {
				ID string `json:"id"`
			} `json:"results"`
			Signals []string `json:"signals"`
		}
		req := map[string]any{"query": query, "scopes": []string{"memories"}, "top_k": 10}
		if signals != nil {
			req["signals"] = signals
		}
		status, body, err := c.Do(ctx, http.MethodPost, "/v1/users/"+user+"/search", req, &resp)
		if err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("search %s through %s: %d %s %v", user, c.URL, status, body, err)
		}
		for _, s := range signals {
			if !slices.Contains(resp.Signals, s) {
				return nil, fmt.Errorf("search %s through %s answered with the signals %v, want %v", user, c.URL, resp.Signals, signals)
			}
		}
		var ids []string
		for _, r := range resp.Results {
			ids = append(ids, r.ID)
		}
		return ids, nil
	}
	// Warm every replica's cache of every user.
	for u := range cfg.Users {
		for _, c := range clients {
			if _, err := search(c, UserID(u), facts[0], []string{"vector"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	const memories = 3 * replicaCount
	for i := range memories {
		user, writer := UserID(i%cfg.Users), i%len(clients)
		text := fmt.Sprintf("Probe %d: my neighbour %s keeps %s bees.", i, probeWord(i, 0), probeWord(i, 1))
		var m struct{ ID string }
		status, body, err := clients[writer].Do(ctx, http.MethodPost, "/v1/users/"+user+"/memories", map[string]any{"text": text}, &m)
		if err != nil || status != http.StatusCreated {
			t.Fatalf("create memory through %s: %d %s %v", clients[writer].URL, status, body, err)
		}
		acked := time.Now()
		var wg sync.WaitGroup
		for r, c := range clients {
			if r == writer {
				continue
			}
			for _, signals := range [][]string{nil, {"vector"}} {
				wg.Go(func() {
					for {
						ids, err := search(c, user, text, signals)
						if err != nil {
							t.Error(err)
							return
						}
						took := time.Since(acked)
						if slices.Contains(ids, m.ID) {
							mu.Lock()
							if signals == nil {
								both = append(both, took)
							} else {
								vector = append(vector, took)
							}
							mu.Unlock()
							if took > visibilityBound {
								t.Errorf("memory %s written through replica %d was found by a search (signals %v) through replica %d after %v, want within %v",
									m.ID, writer, signals, r, took, visibilityBound)
							}
							return
						}
						if took > 3*visibilityBound {
							t.Errorf("memory %s written through replica %d is not found by a search (signals %v) through replica %d after %v",
								m.ID, writer, signals, r, took)
							return
						}
						time.Sleep(20 * time.Millisecond)
					}
				})
			}
		}
		wg.Wait()
	}
	return both, vector
}

// probeWord is a made-up word, different for each i and j, that no other
// text of the suite holds.
func probeWord(i, j int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	w := []byte("zy")
	for n := i*7 + j*131 + 1000; n > 0; n /= len(letters) {
		w = append(w, letters[n%len(letters)])
	}
	return string(w)
}

// checkRateLimit starts three replicas with API keys and a rate limit
// (replicaRate a second, bursts of replicaBurst), creates a key with
// `agentmem keys create`, and sends rateRequests requests at once to each
// replica with it: each must allow its burst (plus what its bucket
// refilled meanwhile) and refuse the rest with 429, so that the key gets
// about three times the burst in all: the limit is kept in each
// process's memory. It returns how many requests each replica allowed.
func checkRateLimit(ctx context.Context, t *testing.T, b Backend) []int {
	var srvs []*Server
	for range replicaCount {
		srvs = append(srvs, StartServe(t, b.DB, "--job-lease", JobLease.String(), "--auth", "apikey",
			"--rate-limit", strconv.Itoa(replicaRate), "--rate-burst", strconv.Itoa(replicaBurst)))
	}
	for _, s := range srvs {
		if err := s.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	token := Agentmem(t, "keys", "create", "--scope", "user:x", "--name", "faults", "--db", b.DB)
	allowed := make([]int, len(srvs))
	took := make([]time.Duration, len(srvs))
	var wg sync.WaitGroup
	for i, s := range srvs {
		c := NewClient(s.URL)
		wg.Go(func() {
			begin := time.Now()
			for range rateRequests {
				status, body, err := c.Do(ctx, http.MethodGet, "/v1/me", nil, nil, "Authorization", "Bearer "+token)
				switch {
				case err != nil:
					t.Errorf("GET /v1/me through replica %d: %v", i, err)
				case status == http.StatusOK:
					allowed[i]++
				case status != http.StatusTooManyRequests:
					t.Errorf("GET /v1/me through replica %d: %d %s, want 200 or 429", i, status, body)
				}
			}
			took[i] = time.Since(begin)
		})
	}
	wg.Wait()
	sum, most := 0, 0
	for i, n := range allowed {
		// The bucket starts full and refills at the rate while the burst
		// is sent.
		refill := int(math.Floor(replicaRate * took[i].Seconds()))
		most += replicaBurst + refill
		sum += n
		if n < replicaBurst || n > replicaBurst+refill {
			t.Errorf("replica %d allowed %d of %d requests sent in %v, want its burst (%d) plus at most its refill (%d)",
				i, n, rateRequests, took[i], replicaBurst, refill)
		}
	}
	if sum < len(srvs)*replicaBurst || sum > most {
		t.Errorf("the replicas allowed %d requests of one key in all, want %d to %d: each replica's burst", sum, len(srvs)*replicaBurst, most)
	}
	return allowed
}

// joinInts formats ns joined by sep.
func joinInts(ns []int, sep string) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep)
}
