-- Scheduled runs (issue 37), documented in SCHEMA.md: the schedules, each turn a cron tick
-- took for one (started, skipped, missed, refused) with the verdict of the run it started,
-- and every webhook delivery attempt.
CREATE TABLE schedules (
  id               TEXT PRIMARY KEY,         -- s-…
  name             TEXT NOT NULL,
  cron             TEXT NOT NULL,            -- five fields, UTC (core/watch/cron.ts)
  spec_json        TEXT NOT NULL,            -- the run spec redacted (as given: the schedule's ScheduleVault)
  baseline_run_id  TEXT,                     -- a pinned baseline; NULL: the schedule's last passed run
  webhooks_json    TEXT NOT NULL,            -- [{url: origin/…, format, secret: "(redacted)", on}] (keys and paths: the vault)
  paused           INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,         -- epoch ms
  next_due_ms      INTEGER,                  -- the turn it waits for; NULL: none
  last_run_id      TEXT                      -- the run of its latest started turn
);

CREATE TABLE schedule_turns (
  schedule_id      TEXT NOT NULL,
  due_ms           INTEGER NOT NULL,         -- the turn's time (epoch ms)
  taken_at         INTEGER NOT NULL,         -- the tick that took it
  outcome          TEXT NOT NULL,            -- started | skipped | missed | refused
  missed           INTEGER NOT NULL DEFAULT 0, -- earlier turns not run since the last look
  detail           TEXT,                     -- why skipped, missed or refused
  run_id           TEXT,                     -- started: the run
  verdict          TEXT,                     -- passed | regressed | failed | inconclusive; NULL until judged
  verdict_json     TEXT,                     -- reasons, regressions, baseline (core/watch/scheduled-verdict.ts)
  baseline_run_id  TEXT,
  PRIMARY KEY (schedule_id, due_ms)          -- two ticks cannot both take a turn
);
CREATE INDEX schedule_turns_unjudged ON schedule_turns (outcome, verdict);

CREATE TABLE webhook_attempts (
  schedule_id      TEXT NOT NULL,
  run_id           TEXT NOT NULL,
  hook             INTEGER NOT NULL,         -- index in the schedule's webhooks
  attempt          INTEGER NOT NULL,         -- 1, 2, …
  at_ms            INTEGER NOT NULL,
  status           INTEGER,                  -- HTTP status; NULL: no answer
  error            TEXT,
  PRIMARY KEY (schedule_id, run_id, hook, attempt)
);
