-- Reflection on ended threads (agentmem.Reflection) and the profile built
-- from the insights it draws (agentmem.Profile). Both are user data:
-- user_id leads their keys and DeleteUser erases them; deleting a thread
-- permanently deletes its reflection. Times are Unix microseconds, UTC;
-- JSON is TEXT.

-- When an insight was built into the profile (NULL: not yet), so that a
-- refresh finds the insights it has not read without a table of its own.
ALTER TABLE memories ADD COLUMN processed_at INTEGER;

-- Where a thread stands in reflection: one row per thread, replaced each
-- time the thread is reflected on again. insights lists the IDs of the
-- insight memories drawn from it (memories are not deleted with it).
CREATE TABLE reflections (
	user_id     TEXT NOT NULL,
	thread_id   TEXT NOT NULL,
	status      TEXT NOT NULL,
	through_seq INTEGER NOT NULL,
	topics      TEXT NOT NULL DEFAULT '[]',
	insights    TEXT NOT NULL DEFAULT '[]',
	reason      TEXT NOT NULL DEFAULT '',
	updated_at  INTEGER NOT NULL,
	PRIMARY KEY (user_id, thread_id)
);
-- FindReflections: one status's reflections, oldest updated first (the
-- pending ones to reflect on, the no-insight ones to aggregate).
CREATE INDEX reflections_status ON reflections (user_id, status, updated_at, thread_id);

-- Versions 1, 2, 3… of a user's profile; the newest is the profile in
-- use, and the older ones say how it came to be. sources lists the IDs
-- of the memories each was built from.
CREATE TABLE profiles (
	user_id    TEXT NOT NULL,
	version    INTEGER NOT NULL,
	text       TEXT NOT NULL,
	method     TEXT NOT NULL,
	model      TEXT NOT NULL DEFAULT '',
	sources    TEXT NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, version)
);
