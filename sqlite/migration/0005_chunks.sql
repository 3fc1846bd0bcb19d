-- Chunks of a thread's turns and the windows by which search finds
-- messages. User data: user_id leads every key and DeleteUser erases them;
-- deleting a thread permanently deletes its chunks. Times are Unix
-- microseconds, UTC; JSON is TEXT.

-- A chunk covers seqs seq_from..seq_to of its thread; chunks of a thread
-- do not overlap, and (thread, seq_from) identifies one when it is
-- written again.
CREATE TABLE chunks (
	user_id    TEXT NOT NULL,
	id         TEXT NOT NULL,
	thread_id  TEXT NOT NULL,
	seq_from   INTEGER NOT NULL,
	seq_to     INTEGER NOT NULL,
	turns      INTEGER NOT NULL,
	text       TEXT NOT NULL,
	summary    TEXT NOT NULL DEFAULT '',
	topics     TEXT NOT NULL DEFAULT '[]',
	entities   TEXT NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, id)
);
CREATE UNIQUE INDEX chunks_thread ON chunks (user_id, thread_id, seq_from);

-- The full-text index of chunks: their text and summary, as memories_fts.
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, summary, content='chunks', tokenize='porter unicode61');
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
	INSERT INTO chunks_fts (rowid, text, summary) VALUES (new.rowid, new.text, new.summary);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
	INSERT INTO chunks_fts (chunks_fts, rowid, text, summary) VALUES ('delete', old.rowid, old.text, old.summary);
END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text, summary ON chunks BEGIN
	INSERT INTO chunks_fts (chunks_fts, rowid, text, summary) VALUES ('delete', old.rowid, old.text, old.summary);
	INSERT INTO chunks_fts (rowid, text, summary) VALUES (new.rowid, new.text, new.summary);
END;

-- Message windows (agentmem.WindowText): the index job writes each turn's
-- window once its neighbours are known, and search then finds the message
-- by its window rather than by its content alone (messages_fts). The
-- index is contentless (the windows repeat their messages' text, which
-- need not be stored twice) and keyed by the message's rowid;
-- contentless_delete lets a window be replaced or deleted by rowid.
-- message_windows lists the messages that have a window, which search
-- leaves out of its messages_fts candidates.
CREATE VIRTUAL TABLE message_windows_fts USING fts5(text, content='', contentless_delete=1, tokenize='porter unicode61');
CREATE TABLE message_windows (
	user_id TEXT NOT NULL,
	doc     INTEGER NOT NULL,
	PRIMARY KEY (user_id, doc)
) WITHOUT ROWID;

CREATE TRIGGER message_windows_delete AFTER DELETE ON messages WHEN old.role IN ('user', 'assistant') BEGIN
	DELETE FROM message_windows_fts WHERE rowid = old.rowid;
	DELETE FROM message_windows WHERE user_id = old.user_id AND doc = old.rowid;
END;
