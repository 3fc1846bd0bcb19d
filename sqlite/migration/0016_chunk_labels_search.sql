-- Full-text search finds a chunk by its topics and entities as well as by
-- its text and summary (seed 001's full-text paths: content,
-- mentioned_topics and entities): a topic the turns never name
-- ("retirement" for a talk about "the numbers") finds them. The index
-- gains the two columns (JSON arrays of strings, whose quotes, commas
-- and brackets the tokenizer splits at) and is rebuilt from the chunks
-- stored before.
DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TRIGGER chunks_fts_update;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, summary, topics, entities, content='chunks', tokenize='porter unicode61');
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
	INSERT INTO chunks_fts (rowid, text, summary, topics, entities) VALUES (new.rowid, new.text, new.summary, new.topics, new.entities);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
	INSERT INTO chunks_fts (chunks_fts, rowid, text, summary, topics, entities) VALUES ('delete', old.rowid, old.text, old.summary, old.topics, old.entities);
END;
CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text, summary, topics, entities ON chunks BEGIN
	INSERT INTO chunks_fts (chunks_fts, rowid, text, summary, topics, entities) VALUES ('delete', old.rowid, old.text, old.summary, old.topics, old.entities);
	INSERT INTO chunks_fts (rowid, text, summary, topics, entities) VALUES (new.rowid, new.text, new.summary, new.topics, new.entities);
END;
INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');
