-- The messages' full-text index merges its segments in the background
-- (issue 31: appends while indexing). With FTS5's automerge, the insert
-- of a commit's messages (indexQueued, in every commit of the request
-- path) did the merge work the index was due: now and then hundreds of
-- pages, in the commit of a single append (appends' p99 while indexing
-- 14 ms, 5.8 without). The write loop does that work instead, a few pages
-- a transaction, between the request path's writes, as background work
-- (Store.mergeStep). Segments merge as before: usermerge (4) of a level
-- at a time.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
