-- Every range of turns a memory was drawn from, as in
-- sqlite/migration/0017_memory_source_ranges.sql: its provenance, then
-- each turn that said it again or refined it, in the order they were
-- added (pos, from 1), each once; invalid mirrors the memory's
-- invalidation, for the partial index FindMemorySources probes first.
CREATE TABLE memory_sources (
	user_id   text COLLATE "C" NOT NULL,
	memory_id text COLLATE "C" NOT NULL,
	thread_id text COLLATE "C" NOT NULL,
	seq_from  bigint NOT NULL,
	seq_to    bigint NOT NULL,
	pos       integer NOT NULL,
	invalid   boolean NOT NULL DEFAULT false,
	PRIMARY KEY (user_id, memory_id, thread_id, seq_from, seq_to)
);
CREATE INDEX memory_sources_thread ON memory_sources (user_id, thread_id, seq_from);
CREATE INDEX memory_sources_invalid ON memory_sources (user_id, thread_id, seq_from) WHERE invalid;

-- Each memory's provenance is its first source, while its thread exists.
INSERT INTO memory_sources (user_id, memory_id, thread_id, seq_from, seq_to, pos, invalid)
	SELECT m.user_id, m.id, m.thread_id, m.seq_from, m.seq_to, 1, m.invalid_at IS NOT NULL FROM memories m
	WHERE m.thread_id <> '' AND EXISTS (SELECT 1 FROM threads t WHERE t.user_id = m.user_id AND t.id = m.thread_id);

-- FindMemorySources reads memory_sources now.
DROP INDEX memories_invalid_thread;
