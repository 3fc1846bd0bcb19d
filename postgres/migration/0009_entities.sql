-- Entities the user talks about, the names that find them and their
-- references from threads (seed 004), as in
-- sqlite/migration/0009_entities.sql. User data: user_id leads every key
-- (the distribution column when scaled out) and DeleteUser erases them;
-- deleting a thread permanently deletes its references, not the
-- entities.

-- name_key is agentmem.EntityKey(name): one entity per name key.
CREATE TABLE entities (
	user_id    text COLLATE "C" NOT NULL,
	id         text COLLATE "C" NOT NULL,
	name       text NOT NULL,
	name_key   text COLLATE "C" NOT NULL,
	type       text NOT NULL DEFAULT '',
	aliases    jsonb NOT NULL DEFAULT '[]',
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, id),
	UNIQUE (user_id, name_key)
);
-- FindEntities without keys, newest updated first.
CREATE INDEX entities_user_updated ON entities (user_id, updated_at DESC, id DESC);

-- The keys that find an entity: its name's (is_name 1) and its aliases'
-- (0), each once per entity. An alias may be several entities' and
-- another's name. FindEntities looks keys up by the primary key.
CREATE TABLE entity_names (
	user_id   text COLLATE "C" NOT NULL,
	key       text COLLATE "C" NOT NULL,
	entity_id text COLLATE "C" NOT NULL,
	is_name   smallint NOT NULL,
	PRIMARY KEY (user_id, key, entity_id)
);
CREATE INDEX entity_names_entity ON entity_names (user_id, entity_id);

-- A thread's reference to an entity: one per action (created, modified,
-- discussed), at the last message (seq, 0 when unknown) that made it.
-- Both directions are listed newest first.
CREATE TABLE entity_refs (
	user_id   text COLLATE "C" NOT NULL,
	entity_id text COLLATE "C" NOT NULL,
	thread_id text COLLATE "C" NOT NULL,
	action    text COLLATE "C" NOT NULL,
	seq       bigint NOT NULL DEFAULT 0,
	at        timestamptz NOT NULL,
	PRIMARY KEY (user_id, entity_id, thread_id, action)
);
CREATE INDEX entity_refs_entity_at ON entity_refs (user_id, entity_id, at DESC, thread_id DESC, action DESC);
CREATE INDEX entity_refs_thread_at ON entity_refs (user_id, thread_id, at DESC, entity_id DESC, action DESC);
