package faults_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/agentmem"
	"github.com/agentmem/agentmem/internal/vecenc"
)

// Report is what CheckMessages found, for the figures.
type Report struct {
	Acknowledged   int // batches acknowledged (201)
	Messages       int // messages of those batches
	Lost           int // acknowledged messages not stored at their acknowledged seq
	Duplicated     int // extra copies of messages (by their token)
	Unacknowledged int // batches never acknowledged (the load's ctx ended first)
	Retried        int // acknowledged batches sent more than once (a request failed)
}

// CheckMessages reads every thread of the load through the API and
// checks it against the ledger: each thread's seqs run 1..N without a
// gap; every stored message is one the load sent; every acknowledged
// message is stored exactly once, at the seq it was acknowledged with;
// every batch, acknowledged or not, is stored whole at consecutive seqs
// or (unacknowledged only) not at all. Each failure is a test error; the
// counts come back as a Report.
func CheckMessages(ctx context.Context, t testing.TB, c *Client, l *Load) Report {
	t.Helper()
	type stored struct {
		thread  string // user/thread
		seq     int64
		content string
	}
	byToken := map[string][]stored{}
	for _, ut := range l.cfg.Threads() {
		type message struct {
			Seq     int64  `json:"seq"`
			Content string `json:"content"`
		}
		msgs, err := List[message](ctx, c, "/v1/users/"+ut.User+"/threads/"+ut.Thread+"/messages?limit=1000")
		if err != nil {
			t.Fatalf("read %s/%s: %v", ut.User, ut.Thread, err)
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Errorf("%s/%s: message %d has seq %d: seqs must run 1..N without a gap", ut.User, ut.Thread, i, m.Seq)
				break
			}
		}
		for _, m := range msgs {
			token, _, _ := strings.Cut(m.Content, ": ")
			byToken[token] = append(byToken[token], stored{ut.User + "/" + ut.Thread, m.Seq, m.Content})
		}
	}

	var r Report
	known := map[string]bool{}
	for _, b := range l.Batches() {
		thread := b.User + "/" + b.Thread
		present := 0
		for _, tok := range b.Tokens {
			known[tok] = true
			if n := len(byToken[tok]); n > 1 {
				r.Duplicated += n - 1
				t.Errorf("batch %s: message %s is stored %d times: %+v", b.Key, tok, n, byToken[tok])
			} else if n == 1 {
				present++
			}
		}
		if b.Acked {
			r.Acknowledged++
			r.Messages += len(b.Tokens)
			if b.Attempts > 1 {
				r.Retried++
			}
		} else {
			r.Unacknowledged++
		}
		// Whole or (unacknowledged) absent, at consecutive seqs of its
		// thread, in its order.
		switch {
		case present == 0 && !b.Acked:
			continue
		case present != len(b.Tokens):
			t.Errorf("batch %s (acknowledged %v): %d of its %d messages are stored: a batch is atomic", b.Key, b.Acked, present, len(b.Tokens))
		}
		for i, tok := range b.Tokens {
			copies := byToken[tok]
			if len(copies) == 0 {
				if b.Acked {
					r.Lost++
					t.Errorf("batch %s: acknowledged message %s (seq %d) is lost", b.Key, tok, b.Seqs[i])
				}
				continue
			}
			got := copies[0]
			switch {
			case got.thread != thread:
				t.Errorf("batch %s: message %s is stored in %s, want %s", b.Key, tok, got.thread, thread)
			case got.content != b.Contents[i]:
				t.Errorf("batch %s: message %s is stored as %q, want %q", b.Key, tok, got.content, b.Contents[i])
			case b.Acked && got.seq != b.Seqs[i]:
				r.Lost++
				t.Errorf("batch %s: message %s was acknowledged at seq %d and is stored at %d", b.Key, tok, b.Seqs[i], got.seq)
			case i > 0 && len(byToken[b.Tokens[0]]) > 0 && got.seq != byToken[b.Tokens[0]][0].seq+int64(i):
				t.Errorf("batch %s: message %d is at seq %d, not right after the batch's first (seq %d)", b.Key, i, got.seq, byToken[b.Tokens[0]][0].seq)
			}
		}
	}
	for tok, copies := range byToken {
		if !known[tok] {
			t.Errorf("message %q is stored (%+v) but no writer sent it", tok, copies)
		}
	}
	return r
}

// CheckMemories checks, through the API, that no user has two valid
// memories with the same text: a statement learned again (a batch indexed
// twice after a crash, or said in many batches) is one memory.
func CheckMemories(ctx context.Context, t testing.TB, c *Client, cfg LoadConfig) (memories int) {
	t.Helper()
	for u := range cfg.Users {
		user := UserID(u)
		type memory struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		mems, err := List[memory](ctx, c, "/v1/users/"+user+"/memories?limit=1000")
		if err != nil {
			t.Fatalf("memories of %s: %v", user, err)
		}
		seen := map[string]string{}
		for _, m := range mems {
			if id, ok := seen[m.Text]; ok {
				t.Errorf("%s has two memories %q: %s and %s", user, m.Text, id, m.ID)
			}
			seen[m.Text] = m.ID
		}
		memories += len(mems)
	}
	return memories
}

// JobCounts is how many jobs of each status the database holds, and
// under "rerun" how many ran more than once (a kill cut a run short, or a
// run failed and was retried).
type JobCounts map[string]int

// CheckJobs reads the jobs table directly: every job must be done, none
// dead (a job that failed or was cut off five times), queued or running,
// and none may hold a lease. Run it once WaitJobs has returned, or on a
// stopped server.
func CheckJobs(t testing.TB, db *sql.DB) JobCounts {
	t.Helper()
	counts := JobCounts{}
	var n int
	for _, row := range query(t, db, `SELECT status, count(*) FROM jobs GROUP BY status`) {
		fmt.Sscan(row[1], &n)
		counts[row[0]] = n
	}
	fmt.Sscan(query(t, db, `SELECT count(*) FROM jobs WHERE attempts > 1`)[0][0], &n)
	counts["rerun"] = n
	t.Logf("jobs by kind (kind, jobs, run more than once): %v",
		query(t, db, `SELECT kind, count(*), sum(CASE WHEN attempts > 1 THEN 1 ELSE 0 END) FROM jobs GROUP BY kind ORDER BY kind`))
	for _, status := range []string{"dead", "queued", "running"} {
		if counts[status] > 0 {
			t.Errorf("%d jobs are %s, want none: %v", counts[status], status,
				query(t, db, `SELECT kind, key, attempts, lease_owner, last_error FROM jobs WHERE status = '`+status+`' LIMIT 5`))
		}
	}
	if leased := query(t, db, `SELECT kind, key, status, lease_owner FROM jobs WHERE lease_until IS NOT NULL LIMIT 5`); len(leased) > 0 {
		t.Errorf("jobs still hold a lease: %v", leased)
	}
	return counts
}

// JobRef names a job: its user and ID (a job's ID is unique per user).
type JobRef struct{ User, ID string }

// CheckJobsRunOnce reads the jobs table directly and checks that each job
// ran once: claimed once (attempts 1), but for the jobs of expect, which
// the test knows must have run again (those a killed server held, once
// by it and once by another server after the lease expired), and must
// have been claimed exactly expect[job] times. A job claimed more often
// ran twice within a lease (taken from a live worker), or failed and was
// retried: each is an error, with its last error. It returns how many
// jobs ran more often than they should have.
func CheckJobsRunOnce(t testing.TB, db *sql.DB, expect map[JobRef]int) (runTwice int) {
	t.Helper()
	seen := map[JobRef]bool{}
	for _, row := range query(t, db, `SELECT user_id, id, kind, key, status, attempts, lease_owner, last_error FROM jobs WHERE attempts <> 1`) {
		j := JobRef{row[0], row[1]}
		var attempts int
		fmt.Sscan(row[5], &attempts)
		want, ok := expect[j]
		if !ok {
			want = 1
		}
		seen[j] = true
		if attempts > want {
			runTwice++
		}
		if attempts != want {
			t.Errorf("job %s/%s (%s %s, %s, finished by %s) was claimed %d times, want %d; last error %q",
				row[0], row[1], row[2], row[3], row[4], row[6], attempts, want, row[7])
		}
	}
	for j, want := range expect {
		if want != 1 && !seen[j] {
			t.Errorf("job %s/%s was claimed once, want %d times", j.User, j.ID, want)
		}
	}
	return runTwice
}

// CheckIndex reads what the background jobs wrote directly from the
// database: every turn (user and assistant message) has its window and
// its vector, each thread's chunks cover its turns from seq 1 without
// overlap or gap, no user has two valid memories with the same text,
// each version of a thread's summary covers more than the one before,
// and each ended thread is reflected on through its last message.
func CheckIndex(t testing.TB, b Backend, db *sql.DB) {
	t.Helper()
	noWindow := `SELECT m.user_id, m.thread_id, m.seq FROM messages m WHERE m.role IN ('user', 'assistant') AND m.content <> ''
		AND NOT EXISTS (SELECT 1 FROM message_windows w WHERE w.user_id = m.user_id AND w.thread_id = m.thread_id AND w.seq = m.seq) LIMIT 5`
	if b.SQLite() {
		noWindow = `SELECT m.user_id, m.thread_id, m.seq FROM messages m WHERE m.role IN ('user', 'assistant')
			AND NOT EXISTS (SELECT 1 FROM message_windows w WHERE w.user_id = m.user_id AND w.doc = m.rowid) LIMIT 5`
	}
	if rows := query(t, db, noWindow); len(rows) > 0 {
		t.Errorf("turns without a window (not indexed): %v", rows)
	}
	// Vectors keep their scope as a code and their IDs short (package
	// internal/vecenc): the turns are matched with them here.
	scope, _ := vecenc.ScopeCode(agentmem.ScopeMessages)
	vectors := map[[2]string]bool{}
	for _, v := range query(t, db, fmt.Sprintf(`SELECT user_id, id FROM vectors WHERE scope = %d`, scope)) {
		vectors[[2]string{v[0], vecenc.ID([]byte(v[1]))}] = true
	}
	var noVector [][]string
	for _, m := range query(t, db, `SELECT user_id, thread_id, seq, id FROM messages WHERE role IN ('user', 'assistant') ORDER BY user_id, thread_id, seq`) {
		if !vectors[[2]string{m[0], m[3]}] && len(noVector) < 5 {
			noVector = append(noVector, m[:3])
		}
	}
	if len(noVector) > 0 {
		t.Errorf("turns without a vector (not indexed): %v", noVector)
	}
	if rows := query(t, db, `SELECT user_id, text, count(*) FROM memories WHERE invalid_at IS NULL
			GROUP BY user_id, text HAVING count(*) > 1 LIMIT 5`); len(rows) > 0 {
		t.Errorf("valid memories stored twice: %v", rows)
	}
	if rows := query(t, db, `SELECT a.user_id, a.thread_id, a.version, a.through_seq, b.through_seq FROM summaries a
			JOIN summaries b ON b.user_id = a.user_id AND b.thread_id = a.thread_id AND b.version = a.version + 1
			WHERE b.through_seq <= a.through_seq LIMIT 5`); len(rows) > 0 {
		t.Errorf("summary versions that cover no more than the one before (a summary written twice): %v", rows)
	}
	if rows := query(t, db, unreflected); len(rows) > 0 {
		t.Errorf("ended threads not reflected on through their last message (user, thread, last_seq, status, through_seq, reason, reflection updated_at, last reflect job done at): %v", rows)
	}
	chunks := query(t, db, `SELECT user_id, thread_id, seq_from, seq_to FROM chunks ORDER BY user_id, thread_id, seq_from`)
	var thread string
	var next int64
	for _, c := range chunks {
		var from, to int64
		fmt.Sscan(c[2], &from)
		fmt.Sscan(c[3], &to)
		if th := c[0] + "/" + c[1]; th != thread {
			thread, next = th, 1
		}
		if from != next || to < from {
			t.Errorf("%s: chunk %d..%d, want one from seq %d: chunks must cover a thread without overlap or gap", thread, from, to, next)
		}
		next = to + 1
	}
}

// unreflected selects up to 5 ended threads that are not reflected on
// through their last message, with their reflection (when it was last
// written) and when their last reflect job was done. A thread reopened by
// an append is reflected on at its next end: its reflection may stay
// pending. An ended thread's must be done, through its last message.
const unreflected = `SELECT t.user_id, t.id, t.last_seq, r.status, r.through_seq, r.reason, r.updated_at,
		(SELECT max(j.updated_at) FROM jobs j WHERE j.user_id = t.user_id AND j.kind = 'reflect' AND j.status = 'done'
			AND j.key IN (t.id, t.id || '/next'))
	FROM threads t LEFT JOIN reflections r ON r.user_id = t.user_id AND r.thread_id = t.id
	WHERE t.status = 'ended' AND (r.status IS NULL OR r.status IN ('pending', 'failed') OR r.through_seq <> t.last_seq) LIMIT 5`

// WaitReflected waits until every ended thread is reflected on through
// its last message (what CheckIndex checks), for at most within or until
// ctx ends, and then returns: CheckIndex reports what is still not. A
// reflection is written by a background job, and the check read the
// table once, the moment WaitJobs returned; waiting on the condition
// itself leaves it no race with the job. A reflection that stays pending
// with no job left to write it still fails, once within has passed: as
// when an end that lost a race with another marks the reflection pending
// after the winner's job has run (its reason then says the reflection is
// queued, and its updated_at is later than the last reflect job's).
func WaitReflected(ctx context.Context, t testing.TB, db *sql.DB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(query(t, db, unreflected)) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// CheckSQLiteFile checks an SQLite database that no process has open:
// PRAGMA integrity_check says ok, the full-text indexes pass FTS5's
// integrity-check against their content, and the queue of messages
// waiting for the full-text index is empty (it is emptied before every
// commit).
func CheckSQLiteFile(t testing.TB, db *sql.DB) {
	t.Helper()
	if rows := query(t, db, `PRAGMA integrity_check`); len(rows) != 1 || rows[0][0] != "ok" {
		t.Errorf("PRAGMA integrity_check: %v, want ok", rows)
	}
	for _, fts := range []string{"messages_fts", "memories_fts", "chunks_fts"} {
		if _, err := db.Exec(`INSERT INTO ` + fts + ` (` + fts + `) VALUES ('integrity-check')`); err != nil {
			t.Errorf("%s integrity-check: %v", fts, err)
		}
	}
	if rows := query(t, db, `SELECT count(*) FROM messages_fts_queue`); len(rows) != 1 || rows[0][0] != "0" {
		t.Errorf("messages_fts_queue holds %v rows after the server stopped, want 0", rows)
	}
}

// query runs a query without arguments and returns its rows as text.
func query(t testing.TB, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}
