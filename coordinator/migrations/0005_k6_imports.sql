-- k6 summaries imported for a crosscheck (`edgeload crosscheck <run> --k6 summary.json`,
-- POST /v1/runs/:id/crosscheck), documented in SCHEMA.md. One row per import; the
-- comparison itself is computed again on read, from this summary and the run's own.
CREATE TABLE k6_imports (
  id               TEXT PRIMARY KEY,         -- k6-<epoch ms base36>-<8 hex>
  run_id           TEXT NOT NULL,            -- runs.id of the edge run it is compared with
  format           TEXT NOT NULL,            -- summary-export | handle-summary | machine-readable | k6-cloud
  imported_at      INTEGER NOT NULL,         -- epoch ms
  summary_json     TEXT NOT NULL             -- the k6 summary as sent, without setup_data (credentials) or the script's source
);
CREATE INDEX k6_imports_run ON k6_imports (run_id, imported_at);
