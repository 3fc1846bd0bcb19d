-- The idle sweep (FindIdleThreads) finds the active threads not updated
-- for a while, across users, oldest first: a partial index holds only
-- the active, live threads.
CREATE INDEX threads_idle ON threads (updated_at) WHERE status = 'active' AND deleted_at IS NULL;
