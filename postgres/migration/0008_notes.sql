-- The notes of a user and agent (agentmem.Notes), as in
-- sqlite/migration/0008_notes.sql: a Markdown document with every version
-- kept. User data: user_id leads the key (the distribution column when
-- scaled out with Citus) and DeleteUser erases them. Times are
-- timestamptz with microsecond precision, written in UTC; identifiers use
-- COLLATE "C" (see 0001_init.sql).
--
-- One row per version (1, 2, 3…); the current notes are the highest
-- version, and the history the rows in descending version, both read
-- from the primary key. A put locks the user's row first (see
-- postgres/notes.go), so puts of a user take turns; the key would refuse
-- a second row of one version all the same.
CREATE TABLE notes (
	user_id    text COLLATE "C" NOT NULL,
	agent_id   text COLLATE "C" NOT NULL,
	version    bigint NOT NULL,
	operation  text NOT NULL,
	content    text NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, agent_id, version)
);
