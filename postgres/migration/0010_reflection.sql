-- Reflection on ended threads (agentmem.Reflection) and the profile built
-- from the insights it draws (agentmem.Profile), as in
-- sqlite/migration/0010_reflection.sql. Both are user data: user_id leads
-- their keys and DeleteUser erases them; deleting a thread permanently
-- deletes its reflection.

-- When an insight was built into the profile (NULL: not yet), so that a
-- refresh finds the insights it has not read without a table of its own.
-- A nullable column without a default: adding it rewrites nothing.
ALTER TABLE memories ADD COLUMN processed_at timestamptz;

-- Where a thread stands in reflection: one row per thread, replaced each
-- time the thread is reflected on again. insights lists the IDs of the
-- insight memories drawn from it (memories are not deleted with it).
CREATE TABLE reflections (
	user_id     text COLLATE "C" NOT NULL,
	thread_id   text COLLATE "C" NOT NULL,
	status      text NOT NULL,
	through_seq bigint NOT NULL,
	topics      jsonb NOT NULL DEFAULT '[]',
	insights    jsonb NOT NULL DEFAULT '[]',
	reason      text NOT NULL DEFAULT '',
	updated_at  timestamptz NOT NULL,
	PRIMARY KEY (user_id, thread_id)
);
-- FindReflections: one status's reflections, oldest updated first (the
-- pending ones to reflect on, the no-insight ones to aggregate).
CREATE INDEX reflections_status ON reflections (user_id, status, updated_at, thread_id);

-- Versions 1, 2, 3… of a user's profile; the newest is the profile in
-- use, and the older ones say how it came to be. sources lists the IDs
-- of the memories each was built from. The primary key is also what
-- keeps two refreshes from storing the same version.
CREATE TABLE profiles (
	user_id    text COLLATE "C" NOT NULL,
	version    integer NOT NULL,
	text       text NOT NULL,
	method     text NOT NULL,
	model      text NOT NULL DEFAULT '',
	sources    jsonb NOT NULL DEFAULT '[]',
	created_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, version)
);
