-- The notes of a user and agent (agentmem.Notes): a Markdown document
-- with every version kept. User data: user_id leads the key and
-- DeleteUser erases them; they belong to no thread. Times are Unix
-- microseconds, UTC.
--
-- One row per version (1, 2, 3…); the current notes are the highest
-- version, and the history the rows in descending version, both read
-- from the primary key. The write loop runs one write at a time, so a
-- put reads the version it replaces and writes the next without a race.
CREATE TABLE notes (
	user_id    TEXT NOT NULL,
	agent_id   TEXT NOT NULL,
	version    INTEGER NOT NULL,
	operation  TEXT NOT NULL,
	content    TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, agent_id, version)
);
