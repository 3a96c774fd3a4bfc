-- Built-in scenarios: custom metrics and iterations of several requests.
--
-- Custom metrics of built-in scenarios (false_positives, active_correct, …), documented
-- in SCHEMA.md. Counters and rates ride on the window row; custom trends
-- (otp_login_duration, …) are ordinary rows of `histograms` under their own metric name.

-- {"c": {"name": count}, "r": {"name": [passes, total]}}; NULL when the run has none.
-- Names may carry a tag in k6's sub-metric form, e.g. "false_positives{type:revoked}".
ALTER TABLE windows ADD COLUMN custom_json TEXT;

-- Finished iterations (k6 `iterations`): one per flow, so a five-request login counts once.
ALTER TABLE windows ADD COLUMN iterations INTEGER NOT NULL DEFAULT 0;
