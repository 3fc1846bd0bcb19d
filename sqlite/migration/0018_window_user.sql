-- Message windows' full-text index gains the user (issue 31): a column u
-- holding one token per user (userToken: "u", the user ID in hex, "0"),
-- so that a search asks FTS5 for the user's windows that hold a word,
-- newest first, and stops after a few hundred (see searchMessages)
-- instead of ranking every user's windows that hold it. The index is
-- contentless, so it is rebuilt from the turns: each window as
-- agentmem.WindowText writes it (the two turns before, the turn twice,
-- the two after; a turn with a name is "name: content"), for the
-- messages that had one.
DROP TRIGGER message_windows_delete;
CREATE VIRTUAL TABLE message_windows_fts_new USING fts5(text, u, content='', contentless_delete=1, tokenize='porter unicode61');
INSERT INTO message_windows_fts_new (rowid, text, u)
SELECT doc, concat_ws(char(10), p2, p1, cur, cur, n1, n2), 'u' || lower(hex(user_id)) || '0' FROM (
	SELECT doc, user_id, cur,
		lag(cur, 2) OVER w AS p2, lag(cur, 1) OVER w AS p1, lead(cur, 1) OVER w AS n1, lead(cur, 2) OVER w AS n2
	FROM (
		SELECT rowid AS doc, user_id, thread_id, seq, CASE WHEN name != '' THEN name || ': ' || content ELSE content END AS cur
		FROM messages WHERE role IN ('user', 'assistant') AND content != ''
	)
	WINDOW w AS (PARTITION BY user_id, thread_id ORDER BY seq)
) x
WHERE EXISTS (SELECT 1 FROM message_windows mw WHERE mw.user_id = x.user_id AND mw.doc = x.doc)
ORDER BY doc;
DROP TABLE message_windows_fts;
ALTER TABLE message_windows_fts_new RENAME TO message_windows_fts;
CREATE TRIGGER message_windows_delete AFTER DELETE ON messages WHEN old.role IN ('user', 'assistant') BEGIN
	DELETE FROM message_windows_fts WHERE rowid = old.rowid;
	DELETE FROM message_windows WHERE user_id = old.user_id AND doc = old.rowid;
END;
