-- Whole-run latency histograms per shard, so queries can group by shard or colo exactly
-- (per-second data stays per region; see SCHEMA.md):
-- {"http_req_duration": {"count", "sum_us", "min_us", "max_us", "buckets"}, "http_req_waiting": …, "http_req_corrected": …}
ALTER TABLE shards ADD COLUMN histograms_json TEXT;
