-- Conversations: users, threads, messages, elements, active sessions and
-- idempotency records, as in sqlite/migration/0001_init.sql. user_id leads
-- every primary key: the distribution column when scaled out with Citus.
-- Times are timestamptz with microsecond precision, written in UTC.
--
-- Identifiers use COLLATE "C": they compare byte by byte, as in SQLite, so
-- both backends order ids (keyset cursors, FindUserIDs) the same way
-- whatever the database's locale, and their indexes stay cheap.

CREATE TABLE users (
	user_id    text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (user_id)
);

CREATE TABLE threads (
	user_id       text COLLATE "C" NOT NULL,
	id            text COLLATE "C" NOT NULL,
	agent_id      text COLLATE "C" NOT NULL DEFAULT '',
	title         text NOT NULL DEFAULT '',
	status        text NOT NULL DEFAULT 'active',
	metadata      jsonb NOT NULL DEFAULT '{}',
	tags          text[] NOT NULL DEFAULT '{}',
	message_count bigint NOT NULL DEFAULT 0,
	last_seq      bigint NOT NULL DEFAULT 0,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	ended_at      timestamptz,
	deleted_at    timestamptz,
	PRIMARY KEY (user_id, id)
);
CREATE INDEX threads_user_updated ON threads (user_id, updated_at DESC, id DESC);
CREATE INDEX threads_user_agent_updated ON threads (user_id, agent_id, updated_at DESC, id DESC);

CREATE TABLE messages (
	user_id      text COLLATE "C" NOT NULL,
	thread_id    text COLLATE "C" NOT NULL,
	seq          bigint NOT NULL,
	id           text COLLATE "C" NOT NULL,
	role         text NOT NULL,
	content      text NOT NULL,
	name         text NOT NULL DEFAULT '',
	tool_calls   jsonb,
	tool_call_id text NOT NULL DEFAULT '',
	metadata     jsonb NOT NULL DEFAULT '{}',
	token_count  bigint NOT NULL,
	created_at   timestamptz NOT NULL,
	PRIMARY KEY (user_id, thread_id, seq)
);
CREATE UNIQUE INDEX messages_user_id ON messages (user_id, id);

CREATE TABLE elements (
	user_id    text COLLATE "C" NOT NULL,
	id         text COLLATE "C" NOT NULL,
	thread_id  text COLLATE "C" NOT NULL,
	message_id text COLLATE "C" NOT NULL DEFAULT '',
	type       text NOT NULL,
	name       text NOT NULL DEFAULT '',
	content    text NOT NULL DEFAULT '',
	url        text NOT NULL DEFAULT '',
	mime_type  text NOT NULL DEFAULT '',
	display    text NOT NULL DEFAULT '',
	metadata   jsonb NOT NULL DEFAULT '{}',
	created_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, id)
);
CREATE INDEX elements_user_thread ON elements (user_id, thread_id, created_at, id);

CREATE TABLE sessions (
	user_id    text COLLATE "C" NOT NULL,
	agent_id   text COLLATE "C" NOT NULL,
	thread_id  text COLLATE "C" NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, agent_id)
);

CREATE TABLE idempotency_keys (
	user_id      text COLLATE "C" NOT NULL,
	thread_id    text COLLATE "C" NOT NULL,
	key          text COLLATE "C" NOT NULL,
	request_hash text NOT NULL,
	seq_from     bigint NOT NULL,
	seq_to       bigint NOT NULL,
	created_at   timestamptz NOT NULL,
	PRIMARY KEY (user_id, thread_id, key)
);
