// Package faults is agentmem's reliability fault suite (issue 17): tests
// that build the real binary, run `agentmem serve` as a child process on
// SQLite and on PostgreSQL, put it under concurrent load through the REST
// API, and then hurt it as production would, checking afterwards, from
// the API and from the database itself, that nothing acknowledged was
// lost and nothing was done twice. The package holds no code: its tests
// are the suite, and docs/reliability.md has the figures they print.
//
// TestCrash kills the server with SIGKILL at random moments (six times,
// every 0.5 to 2 s) while 29 clients append batches of messages to 12
// threads of 4 users, each batch with its own Idempotency-Key and
// retried with that key (after a connection error, 503 or 429) until
// acknowledged, and 3 more build contexts, search and end threads (32
// clients in all). Each time it restarts the server on the same database
// and address, with --job-lease 10s so that the jobs a killed server held
// run again within seconds. Once the load has stopped and the background
// jobs have run, it proves that every acknowledged message is stored
// exactly once, at the seq it was acknowledged with; that each thread's
// seqs run 1..N without a gap; that a batch retried after a kill was
// stored once and whole; that every background job is done (none dead,
// queued or still leased) and its work done once (no two valid memories
// of a user with the same text, a thread's chunks without overlap or
// gap, every turn with its window and vector); and, on SQLite, that the
// file passes PRAGMA integrity_check and its full-text indexes theirs.
// It prints the figures: batches and messages acknowledged, messages
// lost and duplicated, kills survived, and the time from a restart to
// /readyz answering 200.
//
// TestShutdown sends SIGTERM three times under the same load, restarting
// the server each time: it must exit with status 0 within its
// --shutdown-timeout; every request in flight must either complete or
// fail with a connection error or 503 (a retry with the same key after
// the restart then stores the batch exactly once); and no job may be
// left running under a lease (the database is read before the restart).
// The checks of TestCrash then run too.
//
// TestReplicas (PostgreSQL only: SQLite is one process's file by design)
// runs three serve processes on one schema, each on its own port with
// --job-lease 10s, as replicas behind a load balancer, and spreads the
// same load over them (StartLoadOn): each client sends to its replica
// and, after a failure, retries through the next one with the same key.
// After two seconds it stops one replica (SIGSTOP) until the jobs table
// shows it holding jobs under a lease, and kills it (SIGKILL); the load
// goes on through the other two. It proves that appends to the same
// threads through different replicas are stored as TestCrash's are
// (gap-free, ordered, each acknowledged batch once); that the killed
// replica's jobs are done by another once their lease expires, claimed
// once more and no earlier, and that the other two drain the queue; that
// every other job was claimed once (CheckJobsRunOnce) and its work done
// once (CheckIndex); that a thread ended through the three replicas at
// once gets one reflect job; that a memory written through one replica
// is found by searches on the others (both signals, and the vector
// signal alone, which reads each replica's cache of the user's vectors)
// within a second; and, in RateLimit, that the rate limit is each
// replica's: three replicas with --rate-limit 5 --rate-burst 5, sent 20
// requests of one key each at once, each allow its burst of 5, 15 in
// all. It prints the figures: batches acknowledged, lost and duplicated,
// jobs run twice, the jobs the kill left leased and the time from the
// kill until the last of them was done, reflect jobs per end, the search
// visibility delay (median and maximum), and the requests each replica
// allowed. Run it with
//
//	AGENTMEM_FAULTS=1 CI=true go test ./faults -count=1 -v -run TestReplicas | grep 'faults:'
//
// TestOutage_PostgreSQL and TestOutage_SQLiteDiskFull (outage_test.go)
// run agentmem in process and take its database away under load: a TCP
// proxy between agentmem and PostgreSQL refuses new connections or
// swallows them (the machine's PostgreSQL is never stopped: other tests
// share it), and SQLite's max_page_count fills the disk. Requests must
// fail fast with 503 and Retry-After, nothing may be half-written, the
// service must recover by itself, and no job may be lost or killed by
// the outage. TestStartWhileDown_PostgreSQL (startdown_test.go) starts
// the real serve while that proxy refuses connections, or swallows
// them: serve must listen all the same, /healthz 200, /readyz and the
// API 503 with Retry-After, the OpenAI proxy in passthrough mode must
// forward a turn and say in X-Agentmem-Memory-Unavailable that it was
// not stored; once connections go through, without a restart, /readyz
// must turn 200 and an append be stored, indexed and found, and the
// client's next proxied turn store the one the outage missed.
// TestModel_Outage and TestModel_ChunkDescriptionNotJSON
// (model_test.go) make the fake model fail five ways (500, 429, hanging,
// cut JSON, HTML): the request path never waits on it, contexts stay
// within budget, jobs retry and dead-letter with their reason, the
// circuit breakers open and close, and a chunk description that is not
// JSON falls back to the heuristic one.
//
// TestEraseUnderLoad (issue 28) erases four of six users through DELETE
// /v1/users/{user} while the load appends to every user's threads and one
// of the user's jobs runs, then stops the load, waits for the jobs and
// stops serve: no table with a user_id column (read from the schema, so
// that a new table cannot be forgotten) may hold a row of an erased user,
// and the other users' index must be whole (CheckJobs, CheckIndex). It
// prints the rows each erasure left.
//
// TestBackup runs `agentmem backup` while serve takes the load, serves
// the copy, and checks that it holds everything acknowledged before the
// backup began. TestSoak runs a mixed workload (appends, contexts,
// searches, proxied turns, thread ends, profile syntheses) at a fixed
// 20 requests a second for AGENTMEM_SOAK (30s by default; docs/ holds
// a 10m run) on each backend: every request succeeds, the server keeps
// up, and goroutines, open files, heap and bytes per message stay flat;
// with AGENTMEM_SOAK_PLOTS=DIR it draws its latencies and resources as
// PNG charts.
//
// The long tests (all but TestOutage_SQLiteDiskFull and
// TestModel_ChunkDescriptionNotJSON, which take a few seconds in process:
// those that call Long) run only with AGENTMEM_FAULTS=1, and otherwise
// skip, naming the variable, so that a plain `go test ./...` stays quick
// for the person editing; the quick ones run always. ./test sets it (unless it is set already), and so does
// .ci/run: CI runs every test. It is an environment variable, not a test
// flag, because `go test ./...` would pass a flag to every package, and
// the others define none.
//
// The tests read AGENTMEM_TEST_POSTGRES for the PostgreSQL runs, each of
// which has a schema of its own, and fail without it when CI=true (see
// internal/testutil). They talk to 127.0.0.1 only; the child processes
// have no OPENAI_*, AZURE_OPENAI_* or AGENTMEM_* variable, and the only
// model is the fake one in the test process. All the figures of
// docs/reliability.md come from
//
//	AGENTMEM_FAULTS=1 CI=true go test ./faults -count=1 -v | grep 'faults:'
//
// (the soak's with AGENTMEM_SOAK=10m). Each backend's run is bounded by a
// 60 s deadline (the soak by its duration), and the whole package takes
// about three minutes on two cores. The harness is meant for the suite's other tests too:
// harness_test.go builds the binary once per run (Binary, Agentmem) and
// runs it (StartServe: Kill, Term, Restart, Pause, Resume, PID) on each
// backend (Backends, PostgreSQL), load_test.go drives the traffic,
// through one server or several, and keeps its ledger (StartLoad,
// StartLoadOn; Load.Erasing for a user the test erases), and
// check_test.go checks what is stored (CheckMessages, CheckMemories,
// CheckJobs, CheckJobsRunOnce, CheckIndex, CheckSQLiteFile).
package faults
