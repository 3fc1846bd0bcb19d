-- Vectors are kept in their primary key's order (WITHOUT ROWID): loading a
-- user's vectors of a space is one range scan of one b-tree, where it was
-- a scan of the key's index and a lookup of each row in the table, and a
-- put writes three b-trees instead of four.
CREATE TABLE vectors_by_key (
	user_id TEXT NOT NULL,
	space   TEXT NOT NULL,
	scope   TEXT NOT NULL,
	id      TEXT NOT NULL,
	vec     BLOB NOT NULL,
	seq     INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, space, scope, id)
) WITHOUT ROWID;
INSERT INTO vectors_by_key (user_id, space, scope, id, vec, seq) SELECT user_id, space, scope, id, vec, seq FROM vectors;
DROP TABLE vectors;
ALTER TABLE vectors_by_key RENAME TO vectors;
CREATE INDEX vectors_item ON vectors (user_id, scope, id);
CREATE INDEX vectors_seq ON vectors (user_id, space, seq);
