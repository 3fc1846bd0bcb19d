-- Memories' full-text index gains the user (issue 31), as the message
-- windows' did (0018): a column u holding the user's token ("u", the
-- user ID in hex, "0"), so that a search asks for the user's memories
-- that hold a word, newest first, and stops after a bound (see
-- searchMemories) instead of ranking every user's memories that hold it.
-- The index's content is the view searchable_memories, which computes
-- the token, so that 'rebuild' and 'integrity-check' agree with the
-- triggers.
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;
CREATE VIEW searchable_memories AS SELECT rowid AS doc, text, 'u' || lower(hex(user_id)) || '0' AS u FROM memories;
CREATE VIRTUAL TABLE memories_fts USING fts5(text, u, content='searchable_memories', content_rowid='doc', tokenize='porter unicode61');
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
	INSERT INTO memories_fts (rowid, text, u) VALUES (new.rowid, new.text, 'u' || lower(hex(new.user_id)) || '0');
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text, u) VALUES ('delete', old.rowid, old.text, 'u' || lower(hex(old.user_id)) || '0');
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories WHEN old.text IS NOT new.text BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text, u) VALUES ('delete', old.rowid, old.text, 'u' || lower(hex(old.user_id)) || '0');
	INSERT INTO memories_fts (rowid, text, u) VALUES (new.rowid, new.text, 'u' || lower(hex(new.user_id)) || '0');
END;
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
