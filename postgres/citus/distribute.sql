-- Distributing agentmem's PostgreSQL schema with Citus (issue 31, item 4;
-- docs/scaling.md). Run once, as a superuser of the coordinator, on a
-- schema that agentmem has migrated (start agentmem on it first), before
-- the data grows: create_distributed_table moves existing rows to the
-- workers.
--
-- Every user table is distributed by user_id and colocated with users,
-- so that all of a user's rows live on one worker and every query (each
-- is scoped by user_id: postgres.TestQueries_ScopedByUser) runs on one
-- shard; the tables without user data are reference tables, copied to
-- every worker. TestCitusDDL checks that this file names every table of
-- the schema. It has not been run against Citus here (the machines reach
-- no Citus package); the prerequisites it relies on are tested:
-- TestSchema_UserIDFirst (every primary key starts with user_id) and
-- TestQueries_ScopedByUser.
CREATE EXTENSION IF NOT EXISTS citus;

SELECT create_reference_table('api_keys');
SELECT create_reference_table('audit_log');
SELECT create_reference_table('vector_spaces');

SELECT create_distributed_table('users', 'user_id');
SELECT create_distributed_table('threads', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('messages', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('message_windows', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('elements', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('sessions', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('idempotency_keys', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('memories', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('memory_sources', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('memory_history', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('vector_versions', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('vectors', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('reflections', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('profiles', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('summaries', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('chunks', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('notes', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('jobs', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('entities', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('entity_names', 'user_id', colocate_with => 'users');
SELECT create_distributed_table('entity_refs', 'user_id', colocate_with => 'users');
