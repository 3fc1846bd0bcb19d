-- A memory's full-text entry is rewritten only when its text changes:
-- UPDATE OF text fires whenever text is in the SET list, and every update
-- of a memory sets it (an invalidation too), so each one deleted and
-- re-inserted the same words.
DROP TRIGGER memories_fts_update;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories WHEN old.text IS NOT new.text BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
	INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
END;
