-- Each turn is indexed once (issue 31, item 3), as on SQLite
-- (sqlite/migration/0020_turn_index.sql): a message's window is no longer
-- a tsvector of its own (window_tsv, its turns' concatenated: 2 KB a
-- 30-word message with its GIN entries, the store's largest part). Search
-- scores a window from its turns' entries in the GIN index of their own
-- tsv instead: message_windows keeps, for each message with a window, its
-- window's other turns (near: each turn's seq less its own, in decimal,
-- separated by commas) and the window's length in words (len, its own
-- turn's twice). A table of its own, not columns of messages: a window is
-- written again as the turns after it arrive, and each update of a
-- message's row left a dead copy of the whole row (content and tsv), and
-- new entries in each of its indexes, until vacuumed.
--
-- Every turn gets its window here, from the turns, as the index would
-- write it (PutMessageWindows).
CREATE TABLE message_windows (
	user_id   text COLLATE "C" NOT NULL,
	thread_id text COLLATE "C" NOT NULL,
	seq       bigint NOT NULL,
	near      text NOT NULL,
	len       integer NOT NULL,
	PRIMARY KEY (user_id, thread_id, seq)
);
INSERT INTO message_windows (user_id, thread_id, seq, near, len)
SELECT user_id, thread_id, seq, concat_ws(',', p2 - seq, p1 - seq, n1 - seq, n2 - seq),
	coalesce(lp2, 0) + coalesce(lp1, 0) + 2 * lc + coalesce(ln1, 0) + coalesce(ln2, 0)
FROM (
	SELECT user_id, thread_id, seq, lc,
		lag(seq, 2) OVER w AS p2, lag(seq, 1) OVER w AS p1, lead(seq, 1) OVER w AS n1, lead(seq, 2) OVER w AS n2,
		lag(lc, 2) OVER w AS lp2, lag(lc, 1) OVER w AS lp1, lead(lc, 1) OVER w AS ln1, lead(lc, 2) OVER w AS ln2
	FROM (
		SELECT user_id, thread_id, seq,
			coalesce(array_length(regexp_split_to_array(btrim(CASE WHEN name <> '' THEN name || ': ' ELSE '' END || content), '\s+'), 1), 0) AS lc
		FROM messages WHERE role IN ('user', 'assistant') AND content <> ''
	) t
	WINDOW w AS (PARTITION BY user_id, thread_id ORDER BY seq)
) x;

-- A turn's tsv now holds its name, if any, as its window's did ("Name:
-- content"), so the column is made again (which rewrites the table once).
DROP INDEX messages_search;
ALTER TABLE messages DROP COLUMN window_tsv;
ALTER TABLE messages DROP COLUMN tsv;
ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
	CASE WHEN role IN ('user', 'assistant') THEN to_tsvector('english', left(CASE WHEN name <> '' THEN name || ': ' ELSE '' END || content, 100000)) END
) STORED;
-- A GIN index's pending list of new entries (4 MB by default) was most
-- of the small indexes' pages (chunks_tsv's: 486 of 568, migration
-- 0022): 64 kB, flushed into the index more often, in smaller steps.
CREATE INDEX messages_tsv ON messages USING gin (tsv) WITH (gin_pending_list_limit = 64);
ALTER INDEX memories_tsv SET (gin_pending_list_limit = 64);
DROP AGGREGATE tsvector_agg (tsvector);
