-- Every range of turns a memory was drawn from (agentmem.Memory.Sources):
-- its provenance, then each turn that said it again or refined it, in the
-- order they were added (pos, from 1), each once. invalid mirrors the
-- memory's invalid_at IS NOT NULL (set when it is invalidated), so that
-- FindMemorySources probes memory_sources_invalid, which holds the
-- sources of invalidated memories only: the common answer, none, costs
-- that probe. The sources of a range that one overlaps are read from
-- memory_sources_thread. A memory's deletion, its thread's permanent
-- deletion and the user's erasure remove its rows.
CREATE TABLE memory_sources (
	user_id   TEXT NOT NULL,
	memory_id TEXT NOT NULL,
	thread_id TEXT NOT NULL,
	seq_from  INTEGER NOT NULL,
	seq_to    INTEGER NOT NULL,
	pos       INTEGER NOT NULL,
	invalid   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, memory_id, thread_id, seq_from, seq_to)
) WITHOUT ROWID;
CREATE INDEX memory_sources_thread ON memory_sources (user_id, thread_id, seq_from);
CREATE INDEX memory_sources_invalid ON memory_sources (user_id, thread_id, seq_from) WHERE invalid = 1;

-- Each memory's provenance is its first source, while its thread exists.
INSERT INTO memory_sources (user_id, memory_id, thread_id, seq_from, seq_to, pos, invalid)
	SELECT m.user_id, m.id, m.thread_id, m.seq_from, m.seq_to, 1, m.invalid_at IS NOT NULL FROM memories m
	WHERE m.thread_id <> '' AND EXISTS (SELECT 1 FROM threads t WHERE t.user_id = m.user_id AND t.id = m.thread_id);

-- FindMemorySources reads memory_sources now.
DROP INDEX memories_invalid_thread;
