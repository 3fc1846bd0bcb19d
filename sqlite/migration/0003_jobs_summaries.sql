-- Durable jobs and thread summaries. Both are user data: user_id leads
-- their keys and DeleteUser erases them. Times are Unix microseconds, UTC;
-- JSON is TEXT.

-- A job is queued until run_at, running while lease_owner holds its lease
-- (until lease_until), then done or dead (a dead letter, kept for
-- operators). Jobs do not hang off a thread: deleting the thread leaves
-- them, and their handlers find no thread.
CREATE TABLE jobs (
	user_id      TEXT NOT NULL,
	id           TEXT NOT NULL,
	kind         TEXT NOT NULL,
	key          TEXT NOT NULL,
	payload      TEXT NOT NULL DEFAULT '{}',
	status       TEXT NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL,
	run_at       INTEGER NOT NULL,
	lease_owner  TEXT NOT NULL DEFAULT '',
	lease_until  INTEGER,
	last_error   TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	PRIMARY KEY (user_id, id)
);
-- ClaimJobs: queued jobs in run_at order, and running jobs whose lease
-- expired; done and dead jobs, however many, sit in ranges it never reads.
CREATE INDEX jobs_claim ON jobs (status, run_at, lease_until);
-- EnqueueJob's deduplication: one queued or running job per user, kind and key.
CREATE UNIQUE INDEX jobs_active_key ON jobs (user_id, kind, key) WHERE status IN ('queued', 'running');
-- FindJobs, newest updated first, of every job or of one status (the dead
-- letters); the user and kind filters walk jobs_updated.
CREATE INDEX jobs_updated ON jobs (updated_at DESC, user_id DESC, id DESC);
CREATE INDEX jobs_status_updated ON jobs (status, updated_at DESC, user_id DESC, id DESC);

-- Versions 1, 2, 3… of a thread's cumulative summary, each covering seqs
-- 1..through_seq; the newest version is the summary in use. Permanent
-- deletion of the thread deletes them.
CREATE TABLE summaries (
	user_id     TEXT NOT NULL,
	thread_id   TEXT NOT NULL,
	version     INTEGER NOT NULL,
	through_seq INTEGER NOT NULL,
	text        TEXT NOT NULL,
	token_count INTEGER NOT NULL,
	method      TEXT NOT NULL,
	model       TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	PRIMARY KEY (user_id, thread_id, version)
);
