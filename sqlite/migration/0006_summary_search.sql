-- Full-text search over thread summaries (scope summaries): an FTS5
-- external-content index over summaries.text, kept in sync by triggers as
-- memories_fts is. Every version is indexed; search keeps the newest of
-- each thread.
CREATE VIRTUAL TABLE summaries_fts USING fts5(text, content='summaries', tokenize='porter unicode61');
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
	INSERT INTO summaries_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
	INSERT INTO summaries_fts (summaries_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER summaries_fts_update AFTER UPDATE OF text ON summaries BEGIN
	INSERT INTO summaries_fts (summaries_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
	INSERT INTO summaries_fts (rowid, text) VALUES (new.rowid, new.text);
END;
INSERT INTO summaries_fts (summaries_fts) VALUES ('rebuild');
