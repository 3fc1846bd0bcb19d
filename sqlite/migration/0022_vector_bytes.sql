-- Vectors in fewer bytes (issue 31): on the everyday workload their keys
-- and indexes were half of their 800 bytes a message. A row repeated the
-- space's name, the scope and the item's 36-character UUID, and each of
-- its two indexes repeated the whole key.
--
-- vector_spaces names each space once, by a small integer (space_id in
-- vectors); it holds no user data. A vector keeps its scope as a small
-- integer (vecenc.Scopes: messages 0, memories 1, chunks 2, summaries 3)
-- and its item's ID as vecenc.AppendID writes it (17 bytes for a UUID,
-- the random bytes first; another ID as it is). The rows are in the order
-- of their space's writes (seq), so that a user's vectors of a space are
-- one range of the table, which the search's cache loads from both ends
-- side by side and FindVectorsSince reads the end of; vectors_key finds
-- an item's vector for a put or a deletion. vectors_item and vectors_seq
-- go: vectors_key does vectors_item's work (a deletion probes each space,
-- a few), and the table's order vectors_seq's.
CREATE TABLE vector_spaces (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);
INSERT INTO vector_spaces (name) SELECT DISTINCT space FROM vectors ORDER BY space;

CREATE TABLE vectors_by_seq (
	user_id  TEXT NOT NULL,
	space_id INTEGER NOT NULL, -- vector_spaces.id
	seq      INTEGER NOT NULL, -- the write of the user's space that put it (vector_versions.seq)
	scope    INTEGER NOT NULL,
	id       BLOB NOT NULL,
	vec      BLOB NOT NULL,
	PRIMARY KEY (user_id, space_id, seq, scope, id)
) WITHOUT ROWID;
INSERT INTO vectors_by_seq (user_id, space_id, seq, scope, id, vec)
SELECT v.user_id, s.id, v.seq,
	CASE v.scope WHEN 'messages' THEN 0 WHEN 'memories' THEN 1 WHEN 'chunks' THEN 2 WHEN 'summaries' THEN 3 END,
	CASE WHEN v.id GLOB '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*'
		THEN unhex('01' || substr(replace(substr(v.id, 1, 36), '-', ''), 13, 20) || substr(replace(substr(v.id, 1, 36), '-', ''), 1, 12) || hex(substr(v.id, 37)))
		ELSE CAST(v.id AS BLOB) END,
	v.vec
FROM vectors v JOIN vector_spaces s ON s.name = v.space
ORDER BY 1, 2, 3, 4, 5;
DROP TABLE vectors;
ALTER TABLE vectors_by_seq RENAME TO vectors;
CREATE UNIQUE INDEX vectors_key ON vectors (user_id, space_id, scope, id);
