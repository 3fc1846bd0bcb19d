-- FindMemorySources: whether an invalidated memory was drawn from a range
-- of a thread's turns (memories_invalid_thread holds invalidated memories
-- only, so the common answer, no, costs a probe), then the memories drawn
-- from the ranges where one was (memories_thread).
CREATE INDEX memories_thread ON memories (user_id, thread_id, seq_from);
CREATE INDEX memories_invalid_thread ON memories (user_id, thread_id, seq_from) WHERE invalid_at IS NOT NULL;
