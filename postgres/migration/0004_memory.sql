-- Long-term memories with their history, embeddings, and the full-text
-- index of memories and messages, as in sqlite/migration/0004_memory.sql.
-- All are user data: user_id leads every key (the distribution column
-- when scaled out with Citus) and DeleteUser erases them. Times are
-- timestamptz with microsecond precision, written in UTC; identifiers use
-- COLLATE "C" (see 0001_init.sql).
--
-- Full-text search uses a generated tsvector column (the 'english'
-- configuration: Snowball stemming, English stop words) with a GIN index,
-- on memories and on messages. Only user and assistant messages are
-- indexed (tool results and system prompts are not what a user searches
-- for; their tsv is NULL), and only their first 100,000 characters: a
-- tsvector holds at most 1 MB, which a megabyte of distinct words can
-- exceed, and an append must never fail because of its index.

-- A memory is the user's, not its thread's: deleting the thread it was
-- drawn from (thread_id, seq_from..seq_to) leaves it. It holds from
-- valid_from until invalid_at; superseded_by names the memory that
-- replaced it ('' for none). version is that of its newest history entry.
CREATE TABLE memories (
	user_id       text COLLATE "C" NOT NULL,
	id            text COLLATE "C" NOT NULL,
	kind          text NOT NULL,
	text          text NOT NULL,
	category      text NOT NULL DEFAULT '',
	confidence    double precision NOT NULL,
	importance    double precision NOT NULL,
	agent_id      text COLLATE "C" NOT NULL DEFAULT '',
	thread_id     text COLLATE "C" NOT NULL DEFAULT '',
	seq_from      bigint NOT NULL DEFAULT 0,
	seq_to        bigint NOT NULL DEFAULT 0,
	source        text NOT NULL,
	metadata      jsonb NOT NULL DEFAULT '{}',
	version       integer NOT NULL,
	valid_from    timestamptz NOT NULL,
	invalid_at    timestamptz,
	superseded_by text COLLATE "C" NOT NULL DEFAULT '',
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL,
	tsv           tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
	PRIMARY KEY (user_id, id)
);
-- FindMemories, newest updated first; its filters read the rows it walks.
CREATE INDEX memories_user_updated ON memories (user_id, updated_at DESC, id DESC);
CREATE INDEX memories_tsv ON memories USING gin (tsv);

-- Each version of a memory as it was after an operation (add, update,
-- invalidate), and why.
CREATE TABLE memory_history (
	user_id    text COLLATE "C" NOT NULL,
	memory_id  text COLLATE "C" NOT NULL,
	version    integer NOT NULL,
	op         text NOT NULL,
	text       text NOT NULL,
	category   text NOT NULL DEFAULT '',
	confidence double precision NOT NULL,
	importance double precision NOT NULL,
	thread_id  text COLLATE "C" NOT NULL DEFAULT '',
	seq_from   bigint NOT NULL DEFAULT 0,
	seq_to     bigint NOT NULL DEFAULT 0,
	reason     text NOT NULL DEFAULT '',
	at         timestamptz NOT NULL,
	PRIMARY KEY (user_id, memory_id, version)
);

-- An embedding of an item (scope: memories, messages…; id: the item's) in
-- a space (the embedder and its dimension). vec is the vector as
-- little-endian float32, 4 bytes per dimension (pgvector is not
-- required). FindVectors reads a user's space in primary-key order;
-- vectors_item finds an item's vectors when the item is deleted.
CREATE TABLE vectors (
	user_id text COLLATE "C" NOT NULL,
	space   text COLLATE "C" NOT NULL,
	scope   text COLLATE "C" NOT NULL,
	id      text COLLATE "C" NOT NULL,
	vec     bytea NOT NULL,
	PRIMARY KEY (user_id, space, scope, id)
);
CREATE INDEX vectors_item ON vectors (user_id, scope, id);

-- VectorsVersion: a new random version each time a user's vectors of a
-- space are put or deleted, so that a cache of them can tell it is stale
-- with one lookup. Writers of vectors lock these rows first.
CREATE TABLE vector_versions (
	user_id text COLLATE "C" NOT NULL,
	space   text COLLATE "C" NOT NULL,
	version text NOT NULL,
	PRIMARY KEY (user_id, space)
);

-- Rewrites messages once, indexing the messages already stored.
ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
	CASE WHEN role IN ('user', 'assistant') THEN to_tsvector('english', left(content, 100000)) END
) STORED;
CREATE INDEX messages_tsv ON messages USING gin (tsv);
