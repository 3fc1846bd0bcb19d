-- API keys and the audit log. Neither is user data: both are reference
-- tables, shared by all users, whose keys do not start with user_id. A key
-- is looked up by its ID before any user is known, and the audit log must
-- outlive the erasure of the users it records, so DeleteUser touches
-- neither. Times are Unix microseconds, UTC; JSON is TEXT.

-- hash is the hex SHA-256 of the key's secret; the secret is never stored.
-- kind, tenant_id and user_id are the key's scope ('' when unset).
CREATE TABLE api_keys (
	id         TEXT NOT NULL,
	hash       TEXT NOT NULL,
	kind       TEXT NOT NULL,
	tenant_id  TEXT NOT NULL DEFAULT '',
	user_id    TEXT NOT NULL DEFAULT '',
	name       TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	expires_at INTEGER,
	revoked_at INTEGER,
	created_by TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (id)
);
CREATE INDEX api_keys_created ON api_keys (created_at DESC, id DESC);
CREATE INDEX api_keys_tenant_created ON api_keys (tenant_id, created_at DESC, id DESC);

-- user_id is the user acted on as the caller named it, tenant_id its
-- tenant ('' when none).
CREATE TABLE audit_log (
	id        TEXT NOT NULL,
	at        INTEGER NOT NULL,
	actor     TEXT NOT NULL,
	action    TEXT NOT NULL,
	tenant_id TEXT NOT NULL DEFAULT '',
	user_id   TEXT NOT NULL DEFAULT '',
	target    TEXT NOT NULL DEFAULT '',
	detail    TEXT NOT NULL DEFAULT '{}',
	PRIMARY KEY (id)
);
CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_action_at ON audit_log (action, at DESC, id DESC);
CREATE INDEX audit_log_tenant_at ON audit_log (tenant_id, at DESC, id DESC);
CREATE INDEX audit_log_user_at ON audit_log (user_id, at DESC, id DESC);
