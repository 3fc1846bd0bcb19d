-- Entities the user talks about, the names that find them and their
-- references from threads (seed 004). User data: user_id leads every key
-- and DeleteUser erases them; deleting a thread permanently deletes its
-- references, not the entities. Times are Unix microseconds, UTC; JSON is
-- TEXT.

-- name_key is agentmem.EntityKey(name): one entity per name key.
CREATE TABLE entities (
	user_id    TEXT NOT NULL,
	id         TEXT NOT NULL,
	name       TEXT NOT NULL,
	name_key   TEXT NOT NULL,
	type       TEXT NOT NULL DEFAULT '',
	aliases    TEXT NOT NULL DEFAULT '[]',
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, id)
);
CREATE UNIQUE INDEX entities_name ON entities (user_id, name_key);
-- FindEntities without keys, newest updated first.
CREATE INDEX entities_user_updated ON entities (user_id, updated_at DESC, id DESC);

-- The keys that find an entity: its name's (is_name 1) and its aliases'
-- (0), each once per entity. An alias may be several entities' and
-- another's name. FindEntities looks keys up by the primary key.
CREATE TABLE entity_names (
	user_id   TEXT NOT NULL,
	key       TEXT NOT NULL,
	entity_id TEXT NOT NULL,
	is_name   INTEGER NOT NULL,
	PRIMARY KEY (user_id, key, entity_id)
) WITHOUT ROWID;
CREATE INDEX entity_names_entity ON entity_names (user_id, entity_id);

-- A thread's reference to an entity: one per action (created, modified,
-- discussed), at the last message (seq, 0 when unknown) that made it.
-- Both directions are listed newest first.
CREATE TABLE entity_refs (
	user_id   TEXT NOT NULL,
	entity_id TEXT NOT NULL,
	thread_id TEXT NOT NULL,
	action    TEXT NOT NULL,
	seq       INTEGER NOT NULL DEFAULT 0,
	at        INTEGER NOT NULL,
	PRIMARY KEY (user_id, entity_id, thread_id, action)
) WITHOUT ROWID;
CREATE INDEX entity_refs_entity_at ON entity_refs (user_id, entity_id, at DESC, thread_id DESC, action DESC);
CREATE INDEX entity_refs_thread_at ON entity_refs (user_id, thread_id, at DESC, entity_id DESC, action DESC);
