-- Jobs with a serial run one at a time per user and serial (see
-- agentmem.Job.Serial): ClaimJobs leaves a job out while another job of
-- its user and serial is running, which jobs_running_serial finds.
ALTER TABLE jobs ADD COLUMN serial TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_running_serial ON jobs (user_id, serial) WHERE status = 'running' AND serial <> '';
