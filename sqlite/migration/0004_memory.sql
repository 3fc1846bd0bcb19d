-- Long-term memories with their history, embeddings, and the full-text
-- index of memories and messages. All are user data: user_id leads every
-- key and DeleteUser erases them. Times are Unix microseconds, UTC; JSON
-- is TEXT.

-- A memory is the user's, not its thread's: deleting the thread it was
-- drawn from (thread_id, seq_from..seq_to) leaves it. It holds from
-- valid_from until invalid_at; superseded_by names the memory that
-- replaced it ('' for none). version is that of its newest history entry.
CREATE TABLE memories (
	user_id       TEXT NOT NULL,
	id            TEXT NOT NULL,
	kind          TEXT NOT NULL,
	text          TEXT NOT NULL,
	category      TEXT NOT NULL DEFAULT '',
	confidence    REAL NOT NULL,
	importance    REAL NOT NULL,
	agent_id      TEXT NOT NULL DEFAULT '',
	thread_id     TEXT NOT NULL DEFAULT '',
	seq_from      INTEGER NOT NULL DEFAULT 0,
	seq_to        INTEGER NOT NULL DEFAULT 0,
	source        TEXT NOT NULL,
	metadata      TEXT NOT NULL DEFAULT '{}',
	version       INTEGER NOT NULL,
	valid_from    INTEGER NOT NULL,
	invalid_at    INTEGER,
	superseded_by TEXT NOT NULL DEFAULT '',
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL,
	PRIMARY KEY (user_id, id)
);
-- FindMemories, newest updated first; its filters read the rows it walks.
CREATE INDEX memories_user_updated ON memories (user_id, updated_at DESC, id DESC);

-- Each version of a memory as it was after an operation (add, update,
-- invalidate), and why.
CREATE TABLE memory_history (
	user_id    TEXT NOT NULL,
	memory_id  TEXT NOT NULL,
	version    INTEGER NOT NULL,
	op         TEXT NOT NULL,
	text       TEXT NOT NULL,
	category   TEXT NOT NULL DEFAULT '',
	confidence REAL NOT NULL,
	importance REAL NOT NULL,
	thread_id  TEXT NOT NULL DEFAULT '',
	seq_from   INTEGER NOT NULL DEFAULT 0,
	seq_to     INTEGER NOT NULL DEFAULT 0,
	reason     TEXT NOT NULL DEFAULT '',
	at         INTEGER NOT NULL,
	PRIMARY KEY (user_id, memory_id, version)
);

-- An embedding of an item (scope: memories, messages…; id: the item's) in
-- a space (the embedder and its dimension). vec is the vector as
-- little-endian float32, 4 bytes per dimension. FindVectors reads a
-- user's space in primary-key order; vectors_item finds an item's
-- vectors when the item is deleted.
CREATE TABLE vectors (
	user_id TEXT NOT NULL,
	space   TEXT NOT NULL,
	scope   TEXT NOT NULL,
	id      TEXT NOT NULL,
	vec     BLOB NOT NULL,
	PRIMARY KEY (user_id, space, scope, id)
);
CREATE INDEX vectors_item ON vectors (user_id, scope, id);

-- VectorsVersion: a new random version each time a user's vectors of a
-- space are put or deleted, so that a cache of them can tell it is stale
-- with one lookup.
CREATE TABLE vector_versions (
	user_id TEXT NOT NULL,
	space   TEXT NOT NULL,
	version TEXT NOT NULL,
	PRIMARY KEY (user_id, space)
) WITHOUT ROWID;

-- Full-text indexes: FTS5 external-content tables over memories.text and
-- the content of user and assistant messages, keyed by the rowid of their
-- row, stemmed by the porter tokenizer over unicode61, and kept in sync by
-- the triggers below. Tool results and system prompts are not what a user
-- searches for, so messages_fts's content table is the view of the
-- messages it indexes: FTS5's 'rebuild' and 'integrity-check' then agree
-- with the triggers. An external-content index must be told the values
-- it indexed when a row goes ('delete'), so the triggers' conditions on
-- role are the view's.
--
-- They rely on rowids staying put, which SQLite guarantees for a rowid
-- table until VACUUM; VACUUM keeps them too in the SQLite that
-- modernc.org/sqlite embeds (its transfer optimisation copies rows with
-- their rowids), which TestSearch_Vacuum checks.
CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', tokenize='porter unicode61');

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
	INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
	INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
END;

CREATE VIEW searchable_messages AS SELECT rowid AS doc, content FROM messages WHERE role IN ('user', 'assistant');
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='searchable_messages', content_rowid='doc', tokenize='porter unicode61');

-- New messages are indexed once per write transaction, not one by one:
-- FTS5 writes its pending terms to disk at every savepoint, and SQLite
-- opens one for each INSERT whose trigger writes to it (and the write
-- loop one for each caller of a group), so indexing each message as it is
-- inserted wrote one index segment per message and halved the append
-- throughput. The trigger queues the message's rowid instead, and the
-- write loop indexes the queue and empties it just before each commit
-- (Store.indexQueued): the queue is empty whenever no write transaction is
-- open, and a committed message is indexed. A message deleted while still
-- queued leaves the queue only, for the index never held it.
CREATE TABLE messages_fts_queue (
	user_id TEXT NOT NULL,
	doc     INTEGER NOT NULL,
	PRIMARY KEY (user_id, doc)
) WITHOUT ROWID;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.role IN ('user', 'assistant') BEGIN
	INSERT INTO messages_fts_queue (user_id, doc) VALUES (new.user_id, new.rowid);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.role IN ('user', 'assistant') BEGIN
	INSERT INTO messages_fts (messages_fts, rowid, content) SELECT 'delete', old.rowid, old.content
		WHERE NOT EXISTS (SELECT 1 FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid);
	DELETE FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid;
END;
-- Messages are append-only; this keeps the index right should that change.
CREATE TRIGGER messages_fts_update AFTER UPDATE OF role, content ON messages BEGIN
	INSERT INTO messages_fts (messages_fts, rowid, content) SELECT 'delete', old.rowid, old.content
		WHERE old.role IN ('user', 'assistant') AND NOT EXISTS (SELECT 1 FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid);
	DELETE FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid;
	INSERT INTO messages_fts_queue (user_id, doc) SELECT new.user_id, new.rowid WHERE new.role IN ('user', 'assistant');
END;

-- Index the messages stored before this migration.
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
