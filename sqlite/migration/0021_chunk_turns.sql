-- Chunks read their turns instead of keeping a copy of them (issue 31:
-- storage; a chunk's row took 411 bytes a message, most of it the text
-- of its ten turns, one row a page): a chunk's text is
-- agentmem.ChunkText of its thread's turns seq_from..seq_to, which the
-- store assembles from the messages whenever it reads the chunk, and the
-- column text goes. Its full-text index becomes contentless, as the
-- message windows' (0005): PutChunks writes each chunk's text, read from
-- its turns, with its summary and labels, and a chunk leaves the index by
-- its rowid (contentless_delete) when it is written again (PutChunks) or
-- deleted (the trigger). The chunks stored before are indexed as they
-- were: from the text they kept, which the indexer made of the same
-- turns. The table is copied without the column, each row keeping the
-- rowid the index knows it by: dropping the column would rewrite the
-- rows in their pages, each then a tenth full.
DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TRIGGER chunks_fts_update;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, summary, topics, entities, content='', contentless_delete=1, tokenize='porter unicode61');
INSERT INTO chunks_fts (rowid, text, summary, topics, entities) SELECT rowid, text, summary, topics, entities FROM chunks ORDER BY rowid;

CREATE TABLE chunks_new (
	user_id    TEXT NOT NULL,
	id         TEXT NOT NULL,
	thread_id  TEXT NOT NULL,
	seq_from   INTEGER NOT NULL,
	seq_to     INTEGER NOT NULL,
	turns      INTEGER NOT NULL,
	summary    TEXT NOT NULL DEFAULT '',
	topics     TEXT NOT NULL DEFAULT '[]',
	entities   TEXT NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, id)
);
INSERT INTO chunks_new (rowid, user_id, id, thread_id, seq_from, seq_to, turns, summary, topics, entities, created_at)
SELECT rowid, user_id, id, thread_id, seq_from, seq_to, turns, summary, topics, entities, created_at FROM chunks ORDER BY rowid;
DROP TABLE chunks;
ALTER TABLE chunks_new RENAME TO chunks;
CREATE UNIQUE INDEX chunks_thread ON chunks (user_id, thread_id, seq_from);
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
	DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;
