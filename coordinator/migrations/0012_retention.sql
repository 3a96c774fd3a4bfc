-- Nothing left behind (issue 49), documented in SCHEMA.md: a run's Durable Objects delete
-- their storage once it is final and in D1, and its per-second rows are rolled up into
-- per-minute rows after RESULTS_RETENTION_DAYS (coordinator/store/results-retention.ts).

-- Its status view (GET /v1/runs/:id) as it ended, written before its coordinator's storage
-- goes: the API answers from it once the coordinator holds nothing.
ALTER TABLE runs ADD COLUMN view_json TEXT;
-- When its coordinator deleted its storage, its shards and aggregators theirs (epoch ms);
-- NULL while it runs, or when a clean-up did not finish (the cron tick sweeps those).
ALTER TABLE runs ADD COLUMN cleaned_at INTEGER;
-- When its per-second `windows` and `histograms` rows were rolled up into the per-minute
-- tables below (epoch ms); NULL while they are kept.
ALTER TABLE runs ADD COLUMN rolled_up_at INTEGER;
CREATE INDEX runs_uncleaned ON runs (ended_at) WHERE cleaned_at IS NULL;
CREATE INDEX runs_unrolled ON runs (ended_at) WHERE rolled_up_at IS NULL;

-- One row per (run, minute, region, step): the minute's `windows` rows summed. `window_s`
-- is the minute's first second since t0 (a multiple of 60), so the queries of `windows`
-- read these as they are; `seconds` counts the per-second rows rolled into it.
CREATE TABLE windows_minute (
  run_id           TEXT NOT NULL,
  window_s         INTEGER NOT NULL,
  region           TEXT NOT NULL,
  step             TEXT NOT NULL,
  seconds          INTEGER NOT NULL,
  sent             INTEGER NOT NULL,
  requests         INTEGER NOT NULL,
  failed           INTEGER NOT NULL,
  dropped          INTEGER NOT NULL,
  timeouts         INTEGER NOT NULL,
  connection_errors INTEGER NOT NULL,
  status_4xx       INTEGER NOT NULL,
  status_5xx       INTEGER NOT NULL,
  checks_passed    INTEGER NOT NULL,
  checks_failed    INTEGER NOT NULL,
  bytes_received   INTEGER NOT NULL,
  statuses_json    TEXT NOT NULL,
  custom_json      TEXT,
  iterations       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX windows_minute_run ON windows_minute (run_id, window_s);

-- One row per (run, minute, region, step, metric): the minute's `histograms` merged
-- exactly (the same bucket always has the same value_us, so counts add up).
CREATE TABLE histograms_minute (
  run_id           TEXT NOT NULL,
  window_s         INTEGER NOT NULL,
  region           TEXT NOT NULL,
  step             TEXT NOT NULL,
  metric           TEXT NOT NULL,
  count            INTEGER NOT NULL,
  sum_us           INTEGER NOT NULL,
  min_us           INTEGER NOT NULL,
  max_us           INTEGER NOT NULL,
  buckets          TEXT NOT NULL
);
CREATE INDEX histograms_minute_run ON histograms_minute (run_id, metric, window_s);
