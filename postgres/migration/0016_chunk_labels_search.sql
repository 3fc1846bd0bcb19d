-- Full-text search finds a chunk by its topics and entities as well as by
-- its text and summary (seed 001's full-text paths: content,
-- mentioned_topics and entities): a topic the turns never name
-- ("retirement" for a talk about "the numbers") finds them. A generated
-- column's expression cannot change in place: tsv is added again, which
-- computes it for the chunks stored before, and so is its index.
-- to_tsvector of a jsonb array indexes its strings.
DROP INDEX chunks_tsv;
ALTER TABLE chunks DROP COLUMN tsv;
ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
	to_tsvector('english', left(text, 100000) || E'\n' || left(summary, 100000))
	|| to_tsvector('english', topics) || to_tsvector('english', entities)) STORED;
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
