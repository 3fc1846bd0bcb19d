-- FindMemorySources: the threads of a search's candidates that have an
-- invalidated memory (a probe of memories_invalid_thread per thread, which
-- holds only invalidated memories), then every memory drawn from those
-- threads (memories_thread).
CREATE INDEX memories_thread ON memories (user_id, thread_id, seq_from);
CREATE INDEX memories_invalid_thread ON memories (user_id, thread_id) WHERE invalid_at IS NOT NULL;
