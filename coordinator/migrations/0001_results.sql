-- edgeload results database. Documented in SCHEMA.md beside this file.

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  name             TEXT NOT NULL,
  status           TEXT NOT NULL,            -- pending|running|finishing|passed|failed|aborted|error
  target           TEXT NOT NULL,
  created_at       INTEGER NOT NULL,         -- epoch ms
  t0               INTEGER,                  -- common start of all shards, epoch ms
  ended_at         INTEGER,                  -- epoch ms
  duration_ms      INTEGER NOT NULL,         -- planned
  spec_json        TEXT NOT NULL,            -- the run spec with secrets redacted
  plan_json        TEXT NOT NULL,
  summary_json     TEXT,                     -- k6 summary-export layout + edgeload section
  thresholds_ok    INTEGER,                  -- 1 passed, 0 failed, NULL not evaluated
  abort_reason     TEXT
);
CREATE INDEX runs_created ON runs (created_at DESC);
CREATE INDEX runs_status ON runs (status);

CREATE TABLE shards (
  run_id           TEXT NOT NULL REFERENCES runs (id),
  shard            INTEGER NOT NULL,
  region           TEXT NOT NULL,            -- location hint asked for
  colo             TEXT,                     -- colo observed (/cdn-cgi/trace), "local" under wrangler dev
  segment          TEXT NOT NULL,            -- k6 execution segment, e.g. 0/4:1/4
  requests         INTEGER NOT NULL DEFAULT 0,
  failed           INTEGER NOT NULL DEFAULT 0,
  dropped          INTEGER NOT NULL DEFAULT 0,
  restarts         INTEGER NOT NULL DEFAULT 0,
  invocations      INTEGER NOT NULL DEFAULT 0,
  subrequests      INTEGER NOT NULL DEFAULT 0,
  peak_in_flight   INTEGER NOT NULL DEFAULT 0,
  summary_json     TEXT,                     -- per-shard counts and percentiles
  PRIMARY KEY (run_id, shard)
);

-- One row per (run, second, region, step). Normally exactly one; a window that a late
-- shard flushes after it was written gets a second row, so always SUM over a key.
CREATE TABLE windows (
  run_id           TEXT NOT NULL,
  window_s         INTEGER NOT NULL,         -- seconds since t0
  region           TEXT NOT NULL,
  step             TEXT NOT NULL,
  sent             INTEGER NOT NULL,
  requests         INTEGER NOT NULL,         -- completed (k6 http_reqs)
  failed           INTEGER NOT NULL,         -- k6 http_req_failed
  dropped          INTEGER NOT NULL,         -- k6 dropped_iterations
  timeouts         INTEGER NOT NULL,
  connection_errors INTEGER NOT NULL,
  status_4xx       INTEGER NOT NULL,
  status_5xx       INTEGER NOT NULL,
  checks_passed    INTEGER NOT NULL,
  checks_failed    INTEGER NOT NULL,
  bytes_received   INTEGER NOT NULL,
  statuses_json    TEXT NOT NULL             -- {"200": n, "timeout": n, ...}
);
CREATE INDEX windows_run ON windows (run_id, window_s);

-- Merged latency histograms per (run, second, region, step, metric). `buckets` is a JSON
-- array of [value_us, count] pairs, value_us being the bucket midpoint (see SCHEMA.md).
CREATE TABLE histograms (
  run_id           TEXT NOT NULL,
  window_s         INTEGER NOT NULL,
  region           TEXT NOT NULL,
  step             TEXT NOT NULL,
  metric           TEXT NOT NULL,            -- http_req_duration|http_req_waiting|corrected|schedule_lag|slot_wait|client_delay
  count            INTEGER NOT NULL,
  sum_us           INTEGER NOT NULL,
  min_us           INTEGER NOT NULL,
  max_us           INTEGER NOT NULL,
  buckets          TEXT NOT NULL
);
CREATE INDEX histograms_run ON histograms (run_id, metric, window_s);

-- The histogram buckets as rows, for percentile queries in plain SQL.
CREATE VIEW histogram_buckets AS
  SELECT h.run_id, h.window_s, h.region, h.step, h.metric,
         CAST(json_extract(b.value, '$[0]') AS REAL) AS value_us,
         CAST(json_extract(b.value, '$[1]') AS INTEGER) AS count
  FROM histograms h, json_each(h.buckets) b;
