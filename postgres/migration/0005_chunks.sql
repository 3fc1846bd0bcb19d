-- Chunks of a thread's turns and the windows by which search finds
-- messages. User data: user_id leads every key and DeleteUser erases
-- them; deleting a thread permanently deletes its chunks.

-- A chunk covers seqs seq_from..seq_to of its thread; chunks of a thread
-- do not overlap, and (thread, seq_from) identifies one when it is
-- written again. Full-text search reads tsv: its text and summary.
CREATE TABLE chunks (
	user_id    text COLLATE "C" NOT NULL,
	id         text COLLATE "C" NOT NULL,
	thread_id  text COLLATE "C" NOT NULL,
	seq_from   bigint NOT NULL,
	seq_to     bigint NOT NULL,
	turns      integer NOT NULL,
	text       text NOT NULL,
	summary    text NOT NULL DEFAULT '',
	topics     jsonb NOT NULL DEFAULT '[]',
	entities   jsonb NOT NULL DEFAULT '[]',
	created_at timestamptz NOT NULL,
	tsv        tsvector GENERATED ALWAYS AS (to_tsvector('english', left(text, 100000) || E'\n' || left(summary, 100000))) STORED,
	PRIMARY KEY (user_id, id),
	UNIQUE (user_id, thread_id, seq_from)
);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

-- Message windows (agentmem.WindowText): the index job sets a turn's
-- window_tsv once its neighbours are known, and search then finds the
-- message by its window rather than by its content alone (tsv). The one
-- index serves both: search matches coalesce(window_tsv, tsv), as the
-- index is built.
ALTER TABLE messages ADD COLUMN window_tsv tsvector;
CREATE INDEX messages_search ON messages USING gin ((coalesce(window_tsv, tsv)));
DROP INDEX messages_tsv;
