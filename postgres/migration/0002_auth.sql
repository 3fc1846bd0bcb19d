-- API keys and the audit log, as in sqlite/migration/0002_auth.sql.
-- Neither is user data: both are reference tables, shared by all users
-- (replicated to every node when scaled out with Citus), whose keys do not
-- start with user_id. A key is looked up by its ID before any user is
-- known, and the audit log must outlive the erasure of the users it
-- records, so DeleteUser touches neither. Times are timestamptz with
-- microsecond precision, written in UTC; identifiers use COLLATE "C" (see
-- 0001_init.sql).

-- hash is the hex SHA-256 of the key's secret; the secret is never stored.
-- kind, tenant_id and user_id are the key's scope ('' when unset).
CREATE TABLE api_keys (
	id         text COLLATE "C" NOT NULL,
	hash       text NOT NULL,
	kind       text NOT NULL,
	tenant_id  text COLLATE "C" NOT NULL DEFAULT '',
	user_id    text COLLATE "C" NOT NULL DEFAULT '',
	name       text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	expires_at timestamptz,
	revoked_at timestamptz,
	created_by text NOT NULL DEFAULT '',
	PRIMARY KEY (id)
);
CREATE INDEX api_keys_created ON api_keys (created_at DESC, id DESC);
CREATE INDEX api_keys_tenant_created ON api_keys (tenant_id, created_at DESC, id DESC);

-- user_id is the user acted on as the caller named it, tenant_id its
-- tenant ('' when none).
CREATE TABLE audit_log (
	id        text COLLATE "C" NOT NULL,
	at        timestamptz NOT NULL,
	actor     text NOT NULL,
	action    text COLLATE "C" NOT NULL,
	tenant_id text COLLATE "C" NOT NULL DEFAULT '',
	user_id   text COLLATE "C" NOT NULL DEFAULT '',
	target    text NOT NULL DEFAULT '',
	detail    jsonb NOT NULL DEFAULT '{}',
	PRIMARY KEY (id)
);
CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_action_at ON audit_log (action, at DESC, id DESC);
CREATE INDEX audit_log_tenant_at ON audit_log (tenant_id, at DESC, id DESC);
CREATE INDEX audit_log_user_at ON audit_log (user_id, at DESC, id DESC);
