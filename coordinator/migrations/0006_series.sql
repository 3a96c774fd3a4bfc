-- Samples of the target's own series, scraped during a run by scrape steps (Prometheus
-- text, e.g. the target's /metrics), documented in SCHEMA.md. One row per sample; the
-- series are what the spec chose (`scrape.series`), so a run stores a handful per scrape.
CREATE TABLE series (
  run_id           TEXT NOT NULL,
  name             TEXT NOT NULL,            -- metric name, e.g. process_resident_memory_bytes
  labels           TEXT NOT NULL,            -- the sample's labels as JSON, keys sorted ('{}' without)
  t_ms             INTEGER NOT NULL,         -- when it was scraped (epoch ms)
  window_s         INTEGER NOT NULL,         -- seconds since the run's t0, as in `windows`
  value            REAL,                     -- NULL for NaN; ±Inf stored as ±1e308
  shard            INTEGER NOT NULL          -- the shard that scraped it
);
CREATE INDEX series_run ON series (run_id, name, t_ms);
