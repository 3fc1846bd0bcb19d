-- Conversations: users, threads, messages, elements, active sessions and
-- idempotency records. user_id leads every primary key (the distribution
-- column when scaled out). Times are Unix microseconds, UTC.

CREATE TABLE users (
	user_id    TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id)
) WITHOUT ROWID;

CREATE TABLE threads (
	user_id       TEXT NOT NULL,
	id            TEXT NOT NULL,
	agent_id      TEXT NOT NULL DEFAULT '',
	title         TEXT NOT NULL DEFAULT '',
	status        TEXT NOT NULL DEFAULT 'active',
	metadata      TEXT NOT NULL DEFAULT '{}',
	tags          TEXT NOT NULL DEFAULT '[]',
	message_count INTEGER NOT NULL DEFAULT 0,
	last_seq      INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	ended_at      INTEGER,
	deleted_at    INTEGER,
	PRIMARY KEY (user_id, id)
);
CREATE INDEX threads_user_updated ON threads (user_id, updated_at DESC, id DESC);
CREATE INDEX threads_user_agent_updated ON threads (user_id, agent_id, updated_at DESC, id DESC);

CREATE TABLE messages (
	user_id      TEXT NOT NULL,
	thread_id    TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	id           TEXT NOT NULL,
	role         TEXT NOT NULL,
	content      TEXT NOT NULL,
	name         TEXT NOT NULL DEFAULT '',
	tool_calls   TEXT,
	tool_call_id TEXT NOT NULL DEFAULT '',
	metadata     TEXT NOT NULL DEFAULT '{}',
	token_count  INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (user_id, thread_id, seq)
);
CREATE UNIQUE INDEX messages_user_id ON messages (user_id, id);

CREATE TABLE elements (
	user_id    TEXT NOT NULL,
	id         TEXT NOT NULL,
	thread_id  TEXT NOT NULL,
	message_id TEXT NOT NULL DEFAULT '',
	type       TEXT NOT NULL,
	name       TEXT NOT NULL DEFAULT '',
	content    TEXT NOT NULL DEFAULT '',
	url        TEXT NOT NULL DEFAULT '',
	mime_type  TEXT NOT NULL DEFAULT '',
	display    TEXT NOT NULL DEFAULT '',
	metadata   TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, id)
);
CREATE INDEX elements_user_thread ON elements (user_id, thread_id, created_at, id);

CREATE TABLE sessions (
	user_id    TEXT NOT NULL,
	agent_id   TEXT NOT NULL,
	thread_id  TEXT NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, agent_id)
) WITHOUT ROWID;

CREATE TABLE idempotency_keys (
	user_id      TEXT NOT NULL,
	thread_id    TEXT NOT NULL,
	key          TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	seq_from     INTEGER NOT NULL,
	seq_to       INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (user_id, thread_id, key)
) WITHOUT ROWID;
