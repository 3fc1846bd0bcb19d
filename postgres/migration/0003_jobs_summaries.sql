-- Durable jobs and thread summaries, as in sqlite/migration/0003_jobs_summaries.sql.
-- Both are user data: user_id leads their keys (the distribution column
-- when scaled out with Citus) and DeleteUser erases them. Times are
-- timestamptz with microsecond precision, written in UTC; identifiers use
-- COLLATE "C" (see 0001_init.sql).

-- A job is queued until run_at, running while lease_owner holds its lease
-- (until lease_until), then done or dead (a dead letter, kept for
-- operators). Jobs do not hang off a thread: deleting the thread leaves
-- them, and their handlers find no thread.
CREATE TABLE jobs (
	user_id      text COLLATE "C" NOT NULL,
	id           text COLLATE "C" NOT NULL,
	kind         text COLLATE "C" NOT NULL,
	key          text COLLATE "C" NOT NULL,
	payload      jsonb NOT NULL DEFAULT '{}',
	status       text NOT NULL,
	attempts     integer NOT NULL DEFAULT 0,
	max_attempts integer NOT NULL,
	run_at       timestamptz NOT NULL,
	lease_owner  text NOT NULL DEFAULT '',
	lease_until  timestamptz,
	last_error   text NOT NULL DEFAULT '',
	created_at   timestamptz NOT NULL,
	updated_at   timestamptz NOT NULL,
	PRIMARY KEY (user_id, id)
);
-- ClaimJobs: queued jobs in run_at order, and running jobs whose lease
-- expired; done and dead jobs, however many, sit in ranges it never reads.
CREATE INDEX jobs_claim ON jobs (status, run_at, lease_until);
-- EnqueueJob's deduplication (its ON CONFLICT arbiter): one queued or
-- running job per user, kind and key.
CREATE UNIQUE INDEX jobs_active_key ON jobs (user_id, kind, key) WHERE status IN ('queued', 'running');
-- FindJobs, newest updated first, of every job or of one status (the dead
-- letters); the user and kind filters walk jobs_updated.
CREATE INDEX jobs_updated ON jobs (updated_at DESC, user_id DESC, id DESC);
CREATE INDEX jobs_status_updated ON jobs (status, updated_at DESC, user_id DESC, id DESC);

-- Versions 1, 2, 3… of a thread's cumulative summary, each covering seqs
-- 1..through_seq; the newest version is the summary in use. Permanent
-- deletion of the thread deletes them.
CREATE TABLE summaries (
	user_id     text COLLATE "C" NOT NULL,
	thread_id   text COLLATE "C" NOT NULL,
	version     bigint NOT NULL,
	through_seq bigint NOT NULL,
	text        text NOT NULL,
	token_count bigint NOT NULL,
	method      text NOT NULL,
	model       text NOT NULL DEFAULT '',
	created_at  timestamptz NOT NULL,
	PRIMARY KEY (user_id, thread_id, version)
);
