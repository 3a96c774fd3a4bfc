-- What else a run leaves behind (issue 49), documented in SCHEMA.md: the R2 objects it made
-- (a k6/browser script's screenshots, its script bundle) are kept RESULTS_RETENTION_DAYS
-- like its per-second rows, then the cron tick deletes them (coordinator/schedule/artifact-sweep.ts);
-- delivery attempts of scheduled turns' alerts are deleted as old.

-- When the run's R2 objects were deleted (epoch ms); NULL while they are kept.
ALTER TABLE runs ADD COLUMN artifacts_swept_at INTEGER;
CREATE INDEX runs_unswept ON runs (ended_at) WHERE artifacts_swept_at IS NULL;
-- The sweep deletes attempts older than the retention, oldest first, a bounded slice a tick.
CREATE INDEX webhook_attempts_at ON webhook_attempts (at_ms);
