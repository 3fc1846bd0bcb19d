-- Chunks read their turns instead of keeping a copy of them (issue 31:
-- storage; the text, compressed in the rows, took 164 of the 756 bytes a
-- message that chunks took): a chunk's text is agentmem.ChunkText of its
-- thread's turns seq_from..seq_to, which the store assembles from the
-- messages whenever it reads the chunk, and the column text goes. tsv,
-- generated from it, becomes a plain column that PutChunks computes as
-- the generation did, from the text read from the turns; the chunks
-- stored before keep theirs, computed from the text they kept, which the
-- indexer made of the same turns. Dropping a column leaves its values in
-- the rows until they are written again: CLUSTER rewrites the table now,
-- without them, and its indexes.
--
-- The GIN index of tsv gathers new entries in a pending list of 64 kB,
-- not the default 4 MB: the list's pages stay the index's once merged
-- into it, and made it eight times the size of the same index built at
-- once (20,000 everyday messages: 4.7 MB, 230 bytes a message, against
-- 0.58 MB). With 64 kB it is 0.63 MB, for the same time to insert (the
-- merges, each of a few chunks' entries, included); without a list
-- (fastupdate off), 0.54 MB, but each chunk's 175 entries inserted one by
-- one took eight times as long.
ALTER TABLE chunks ALTER COLUMN tsv DROP EXPRESSION;
ALTER TABLE chunks DROP COLUMN text;
ALTER INDEX chunks_tsv SET (gin_pending_list_limit = 64);
CLUSTER chunks USING chunks_user_id_thread_id_seq_from_key;
ALTER TABLE chunks SET WITHOUT CLUSTER;
