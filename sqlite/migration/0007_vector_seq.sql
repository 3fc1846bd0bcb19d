-- Incremental loading of a user's vectors (agentmem.VectorsState): every
-- write of a user's space counts in vector_versions.seq, each vector
-- records the seq of its last put, reset_seq the seq of the newest
-- deletion, and epoch names the counter (a new one when the row is made
-- again after the user's erasure).
ALTER TABLE vectors ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vector_versions ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vector_versions ADD COLUMN reset_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vector_versions ADD COLUMN epoch TEXT NOT NULL DEFAULT '';
CREATE INDEX vectors_seq ON vectors (user_id, space, seq);
