-- Scheduled turns' alerts, delivered durably (issues 47 and 48), documented in SCHEMA.md:
-- every alert is written here in the same D1 batch as the turn or verdict it is about, and
-- each cron tick sends what is due, with backoff, until delivered or abandoned after 24 h.
CREATE TABLE alert_outbox (
  delivery_id      TEXT PRIMARY KEY,         -- random, the same on every attempt: x-edgeload-delivery, deliveryId
  schedule_id      TEXT NOT NULL,
  due_ms           INTEGER NOT NULL,         -- the turn it is about
  kind             TEXT NOT NULL,            -- passed | regressed | failed | inconclusive | refused | skipped | missed | recovered
  hook             INTEGER NOT NULL,         -- index in the schedule's webhooks (URL and key: its ScheduleVault)
  run_id           TEXT,                     -- the turn's run; NULL when it started none
  event_json       TEXT NOT NULL,            -- what the alert says (core/watch/webhook.ts AlertEvent); no secret
  created_at       INTEGER NOT NULL,         -- epoch ms, the tick that enqueued it
  next_attempt_at  INTEGER,                  -- when a tick tries it next; NULL once delivered or abandoned
  attempts         INTEGER NOT NULL DEFAULT 0,
  delivered_at     INTEGER,
  abandoned_at     INTEGER,
  last_status      INTEGER,                  -- HTTP status of the last attempt; NULL: no answer
  last_error       TEXT,
  UNIQUE (schedule_id, due_ms, kind, hook)   -- one alert of a kind per turn and webhook, whichever tick enqueued it
);
CREATE INDEX alert_outbox_due ON alert_outbox (next_attempt_at);
CREATE INDEX alert_outbox_queue ON alert_outbox (schedule_id, hook, created_at); -- one webhook's alerts go in order

-- A turn that started no run alerts too: webhook_attempts.run_id becomes nullable (SQLite
-- changes a column's constraint only by rebuilding its table), and each attempt names its alert.
CREATE TABLE webhook_attempts_0010 (
  schedule_id      TEXT NOT NULL,
  run_id           TEXT,                     -- NULL: a turn without a run (refused, skipped, missed)
  hook             INTEGER NOT NULL,         -- index in the schedule's webhooks
  attempt          INTEGER NOT NULL,         -- 1, 2, …
  at_ms            INTEGER NOT NULL,
  status           INTEGER,                  -- HTTP status; NULL: no answer
  error            TEXT,                     -- why it failed, or why the alert was abandoned
  delivery_id      TEXT,                     -- alert_outbox.delivery_id; NULL for attempts made before 0010
  kind             TEXT                      -- the alert's kind; NULL before 0010
);
INSERT INTO webhook_attempts_0010 (schedule_id, run_id, hook, attempt, at_ms, status, error)
  SELECT schedule_id, run_id, hook, attempt, at_ms, status, error FROM webhook_attempts;
DROP TABLE webhook_attempts;
ALTER TABLE webhook_attempts_0010 RENAME TO webhook_attempts;
CREATE UNIQUE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt);
CREATE INDEX webhook_attempts_schedule ON webhook_attempts (schedule_id, at_ms);
