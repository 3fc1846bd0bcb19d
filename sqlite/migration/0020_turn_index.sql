-- Each turn is indexed once (issue 31, item 3): a message's window is no
-- longer a row of its own in a full-text index, where every word of a
-- turn was written six times (two turns each side, its own twice: 456 B
-- a 30-word message, the store's largest part). Search scores a window
-- from its turns' entries in messages_fts instead (see searchMessages):
-- message_windows keeps, for each message that has a window, the rowids
-- of its window's other turns (near: each as a signed varint of its
-- difference from doc) and the window's length in words (len, its own
-- turn's twice), which is what BM25 needs of it.
--
-- messages_fts gains the user, as memories_fts did (0019): a column u
-- holding the user's token ("u", the user ID in hex, "0"), so that a
-- search asks for the user's turns that hold a word, newest first, and
-- stops after a bound. A turn's text is as a window wrote it: its name,
-- if any, then its content ("Name: content").
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TRIGGER message_windows_delete;
DROP TABLE messages_fts;
DROP VIEW searchable_messages;
DROP TABLE message_windows_fts;
DELETE FROM messages_fts_queue;

-- Every turn gets its window here, its turns and length from the
-- messages, as the index would write it (PutMessageWindows; its words:
-- its spaces and lines, plus one, for each of its turns, its own twice).
CREATE TABLE message_windows_new (
	user_id TEXT NOT NULL,
	doc     INTEGER NOT NULL,
	near    TEXT NOT NULL,
	len     INTEGER NOT NULL,
	PRIMARY KEY (user_id, doc)
) WITHOUT ROWID;
INSERT INTO message_windows_new (user_id, doc, near, len)
SELECT user_id, doc, concat_ws(',', p2 - doc, p1 - doc, n1 - doc, n2 - doc),
	coalesce(lp2, 0) + coalesce(lp1, 0) + 2 * lc + coalesce(ln1, 0) + coalesce(ln2, 0) FROM (
	SELECT doc, user_id, lc,
		lag(doc, 2) OVER w AS p2, lag(doc, 1) OVER w AS p1, lead(doc, 1) OVER w AS n1, lead(doc, 2) OVER w AS n2,
		lag(lc, 2) OVER w AS lp2, lag(lc, 1) OVER w AS lp1, lead(lc, 1) OVER w AS ln1, lead(lc, 2) OVER w AS ln2
	FROM (
		SELECT rowid AS doc, user_id, thread_id, seq,
			1 + length(content) - length(replace(replace(content, ' ', ''), char(10), '')) + CASE WHEN name != '' THEN 1 ELSE 0 END AS lc
		FROM messages WHERE role IN ('user', 'assistant') AND content != ''
	)
	WINDOW w AS (PARTITION BY user_id, thread_id ORDER BY seq)
) x;
DROP TABLE message_windows;
ALTER TABLE message_windows_new RENAME TO message_windows;

CREATE VIEW searchable_messages AS SELECT rowid AS doc, CASE WHEN name != '' THEN name || ': ' || content ELSE content END AS text,
	'u' || lower(hex(user_id)) || '0' AS u FROM messages WHERE role IN ('user', 'assistant');
CREATE VIRTUAL TABLE messages_fts USING fts5(text, u, content='searchable_messages', content_rowid='doc', tokenize='porter unicode61');
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.role IN ('user', 'assistant') BEGIN
	INSERT INTO messages_fts (messages_fts, rowid, text, u)
		SELECT 'delete', old.rowid, CASE WHEN old.name != '' THEN old.name || ': ' || old.content ELSE old.content END, 'u' || lower(hex(old.user_id)) || '0'
		WHERE NOT EXISTS (SELECT 1 FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid);
	DELETE FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid;
	DELETE FROM message_windows WHERE user_id = old.user_id AND doc = old.rowid;
END;
-- Messages are append-only; this keeps the index right should that change.
CREATE TRIGGER messages_fts_update AFTER UPDATE OF role, content, name ON messages BEGIN
	INSERT INTO messages_fts (messages_fts, rowid, text, u)
		SELECT 'delete', old.rowid, CASE WHEN old.name != '' THEN old.name || ': ' || old.content ELSE old.content END, 'u' || lower(hex(old.user_id)) || '0'
		WHERE old.role IN ('user', 'assistant') AND NOT EXISTS (SELECT 1 FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid);
	DELETE FROM messages_fts_queue WHERE user_id = old.user_id AND doc = old.rowid;
	INSERT INTO messages_fts_queue (user_id, doc) SELECT new.user_id, new.rowid WHERE new.role IN ('user', 'assistant');
END;
INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');


-- Search ranks by BM25 over the user's own items (agentmem.ScoreWindows):
-- it needs the number of the user's windows and memories and their
-- average length in words, which counting at each search cost a pass
-- over all of them (14 ms at 100,000 windows). search_totals keeps them,
-- by scope ('messages', 'memories'), in step by triggers. A memory's
-- words are its spaces plus one, as the migration counts a turn's.
CREATE TABLE search_totals (
	user_id TEXT NOT NULL,
	scope   TEXT NOT NULL,
	items   INTEGER NOT NULL,
	words   INTEGER NOT NULL,
	PRIMARY KEY (user_id, scope)
) WITHOUT ROWID;
INSERT INTO search_totals (user_id, scope, items, words)
SELECT user_id, 'messages', count(*), total(len) FROM message_windows GROUP BY user_id;
INSERT INTO search_totals (user_id, scope, items, words)
SELECT user_id, 'memories', count(*), total(length(text) - length(replace(text, ' ', '')) + 1) FROM memories GROUP BY user_id;
CREATE TRIGGER message_windows_totals_insert AFTER INSERT ON message_windows BEGIN
	INSERT INTO search_totals (user_id, scope, items, words) VALUES (new.user_id, 'messages', 1, new.len)
	ON CONFLICT (user_id, scope) DO UPDATE SET items = items + 1, words = words + excluded.words;
END;
CREATE TRIGGER message_windows_totals_update AFTER UPDATE OF len ON message_windows BEGIN
	UPDATE search_totals SET words = words + new.len - old.len WHERE user_id = new.user_id AND scope = 'messages';
END;
CREATE TRIGGER message_windows_totals_delete AFTER DELETE ON message_windows BEGIN
	UPDATE search_totals SET items = items - 1, words = words - old.len WHERE user_id = old.user_id AND scope = 'messages';
END;
CREATE TRIGGER memories_totals_insert AFTER INSERT ON memories BEGIN
	INSERT INTO search_totals (user_id, scope, items, words) VALUES (new.user_id, 'memories', 1, length(new.text) - length(replace(new.text, ' ', '')) + 1)
	ON CONFLICT (user_id, scope) DO UPDATE SET items = items + 1, words = words + excluded.words;
END;
CREATE TRIGGER memories_totals_update AFTER UPDATE OF text ON memories WHEN old.text IS NOT new.text BEGIN
	UPDATE search_totals SET words = words + (length(new.text) - length(replace(new.text, ' ', ''))) - (length(old.text) - length(replace(old.text, ' ', '')))
	WHERE user_id = new.user_id AND scope = 'memories';
END;
CREATE TRIGGER memories_totals_delete AFTER DELETE ON memories BEGIN
	UPDATE search_totals SET items = items - 1, words = words - (length(old.text) - length(replace(old.text, ' ', '')) + 1)
	WHERE user_id = old.user_id AND scope = 'memories';
END;
