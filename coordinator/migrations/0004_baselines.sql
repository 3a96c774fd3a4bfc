-- Named baselines for run comparison (GET /v1/runs/<name>/compare/<run>), documented in
-- SCHEMA.md. A name points at one run; saving it again moves it to another run.
CREATE TABLE baselines (
  name             TEXT PRIMARY KEY,         -- a-z 0-9 . _ -, never "r-…" (so it cannot pass for a run id)
  run_id           TEXT NOT NULL,            -- runs.id
  created_at       INTEGER NOT NULL          -- epoch ms of the last save
);
