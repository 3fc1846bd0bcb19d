-- Full-text search over thread summaries (scope summaries). Every version
-- is indexed; search keeps the newest of each thread.
ALTER TABLE summaries ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', left(text, 100000))) STORED;
CREATE INDEX summaries_tsv ON summaries USING gin (tsv);
