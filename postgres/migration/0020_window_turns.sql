-- A message's window_tsv is its window's turns' tsvectors concatenated
-- (the message's own twice), each turn's name and its tsv, rather than
-- to_tsvector of the window's text: the same lexemes and as many
-- positions of each (ts_rank counts them), for a sixth of the parsing
-- (agentmem.MessageWindow.Turns, PutMessageWindows).
CREATE AGGREGATE tsvector_agg (tsvector) (SFUNC = tsvector_concat, STYPE = tsvector, INITCOND = '');
