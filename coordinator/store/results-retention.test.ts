/**
 * The rollup of old runs' per-second rows into per-minute rows, and the outbox's pruning,
 * on the real schema (every migration applied to node:sqlite): what a user reads of a run
 * after its rollup is what they read before, a minute at a time.
 */
import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runQuery } from "../../core/results/query.ts";
import { loadQueryInput, type SqlReader } from "./results-queries.ts";
import { markRolledUp, pruneSettledAlerts, rollUp, runToRollUp } from "./results-retention.ts";
import type { SqlWriter } from "./sql-writer.ts";

const MIGRATIONS = join(import.meta.dirname, "../migrations");

/** A fresh results database with every migration, behind the slice of D1's API the store uses. */
function database(): SqlWriter & SqlReader & { raw: DatabaseSync } {
  const db = new DatabaseSync(":memory:");
  for (const file of readdirSync(MIGRATIONS)
    .filter((f) => f.endsWith(".sql"))
    .sort())
    db.exec(readFileSync(join(MIGRATIONS, file), "utf8"));
  type Bound = { sql: string; params: unknown[]; bind(...p: unknown[]): Bound; all<T>(): Promise<{ results: T[] }> };
  const bound = (sql: string, params: unknown[] = []): Bound => ({
    sql,
    params,
    bind: (...p: unknown[]) => bound(sql, p),
    all: async <T>() => ({ results: db.prepare(sql).all(...(params as never[])) as T[] }),
  });
  const run = (s: Bound) => {
    const statement = db.prepare(s.sql);
    return { results: statement.columns().length ? statement.all(...(s.params as never[])) : (statement.run(...(s.params as never[])), []) };
  };
  return {
    raw: db,
    prepare: (sql: string) => bound(sql),
    // A D1 batch is one transaction.
    batch: async (statements: Bound[]) => {
      db.exec("BEGIN");
      try {
        const out = statements.map(run);
        db.exec("COMMIT");
        return out;
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    },
  } as unknown as SqlWriter & SqlReader & { raw: DatabaseSync };
}

const DAY = 86_400_000;

/** A passed run that ended `endedAt`, with `seconds` per-second rows in two regions (a late second row for window 61). */
function seedRun(db: DatabaseSync, id: string, endedAt: number, seconds: number): void {
  db.prepare(
    "INSERT INTO runs (id, name, status, target, created_at, t0, ended_at, duration_ms, spec_json, plan_json) VALUES (?, 'n', 'passed', 't', 0, 0, ?, ?, '{}', '{}')",
  ).run(id, endedAt, seconds * 1000);
  const window = db.prepare(
    `INSERT INTO windows (run_id, window_s, region, step, sent, requests, failed, dropped, timeouts, connection_errors, status_4xx, status_5xx,
       checks_passed, checks_failed, bytes_received, statuses_json, custom_json, iterations) VALUES (?, ?, ?, 'GET /', ?, ?, ?, 0, 0, 0, 0, ?, 0, 0, 100, ?, ?, ?)`,
  );
  const histogram = db.prepare(
    "INSERT INTO histograms (run_id, window_s, region, step, metric, count, sum_us, min_us, max_us, buckets) VALUES (?, ?, ?, 'GET /', 'http_req_duration', ?, ?, ?, ?, ?)",
  );
  const rows: Array<[number, string]> = [];
  for (let s = 0; s < seconds; s++) for (const region of ["wnam", "weur"]) rows.push([s, region]);
  rows.push([61, "wnam"]); // a late shard's portion of a window already written: a second row
  for (const [s, region] of rows) {
    const failed = s % 7 === 0 ? 1 : 0;
    const custom = JSON.stringify({ c: { refreshed: 2 }, r: { active_correct: [3, 4] } });
    window.run(id, s, region, 10, 10, failed, failed, JSON.stringify({ 200: 10 - failed, ...(failed ? { 503: 1 } : {}) }), custom, 5);
    const fast = 1_000 + (s % 5) * 10;
    histogram.run(
      id,
      s,
      region,
      10,
      9 * fast + 50_000,
      fast,
      50_000,
      JSON.stringify([
        [fast, 9],
        [50_000, 1],
      ]),
    );
  }
}

describe("rollUp", () => {
  it("turns a run's seconds into minutes that answer every whole-run and per-minute query as the seconds did, and deletes the seconds", async () => {
    const db = database();
    seedRun(db.raw, "r-old", 0, 150);
    const whole = {
      by: ["region" as const],
      everyS: null,
      metrics: ["requests", "iterations", "failed", "p50", "p95", "p99", "max"] as const,
      trend: "duration" as const,
    };
    const perMinute = { ...whole, by: [], everyS: 60 };
    const before = await loadQueryInput(db, "r-old", "duration");
    for (const { fromS, toS } of [
      { fromS: 0, toS: 120 },
      { fromS: 120, toS: 420 },
    ])
      await rollUp(db, "r-old", fromS, toS);
    const after = await loadQueryInput(db, "r-old", "duration");
    expect(after!.resolutionS).toBe(60);
    expect(runQuery(after!, { ...whole, metrics: [...whole.metrics] })).toEqual(runQuery(before!, { ...whole, metrics: [...whole.metrics] }));
    expect(runQuery(after!, { ...perMinute, metrics: [...whole.metrics] })).toEqual(runQuery(before!, { ...perMinute, metrics: [...whole.metrics] }));
    expect(db.raw.prepare("SELECT COUNT(*) AS n FROM windows WHERE run_id = 'r-old'").get()).toEqual({ n: 0 });
    expect(db.raw.prepare("SELECT COUNT(*) AS n FROM histograms WHERE run_id = 'r-old'").get()).toEqual({ n: 0 });
    // Three minutes (the last one 30 s long), two regions.
    const minutes = db.raw
      .prepare("SELECT window_s, region, seconds, requests, statuses_json, custom_json FROM windows_minute ORDER BY window_s, region")
      .all();
    expect(minutes.map((m) => [m.window_s, m.region, m.seconds])).toEqual([
      [0, "weur", 60],
      [0, "wnam", 60],
      [60, "weur", 60],
      [60, "wnam", 60],
      [120, "weur", 30],
      [120, "wnam", 30],
    ]);
    // Window 61's two rows both counted; statuses and custom counters summed by name.
    expect(minutes[3]).toMatchObject({ requests: 610 });
    const statuses = JSON.parse(String(minutes[3]!.statuses_json)) as Record<string, number>;
    expect(statuses["200"]! + (statuses["503"] ?? 0)).toBe(610);
    expect(JSON.parse(String(minutes[3]!.custom_json))).toEqual({ c: { refreshed: 122 }, r: { active_correct: [183, 244] } });
  });

  it("finds the oldest run past its retention with seconds left, and none once it is marked rolled up", async () => {
    const db = database();
    seedRun(db.raw, "r-recent", 80 * DAY, 3);
    seedRun(db.raw, "r-older", 5 * DAY, 3);
    seedRun(db.raw, "r-oldest", 1 * DAY, 3);
    expect(await runToRollUp(db, 10 * DAY)).toEqual({ id: "r-oldest", firstWindowS: 0 });
    await rollUp(db, "r-oldest", 0, 300);
    expect(await runToRollUp(db, 10 * DAY)).toEqual({ id: "r-oldest", firstWindowS: null });
    await markRolledUp(db, "r-oldest", 100 * DAY);
    // r-recent ended after the cut-off: kept per second.
    expect(await runToRollUp(db, 10 * DAY)).toEqual({ id: "r-older", firstWindowS: 0 });
  });
});

describe("pruneSettledAlerts", () => {
  it("deletes settled alerts older than the cut-off, keeping those still due and those of a streak not yet recovered from", async () => {
    const db = database();
    const turn = db.raw.prepare("INSERT INTO schedule_turns (schedule_id, due_ms, taken_at, outcome, verdict) VALUES (?, ?, ?, 'started', ?)");
    const alert = db.raw.prepare(
      "INSERT INTO alert_outbox (delivery_id, schedule_id, due_ms, kind, hook, event_json, created_at, next_attempt_at) VALUES (?, ?, ?, 'failed', ?, '{}', ?, ?)",
    );
    // Schedule a: failed at 1, passed at 2 (a streak recovered from), failed at 3 (a streak going on).
    for (const [due, verdict] of [
      [1, "failed"],
      [2, "passed"],
      [3, "failed"],
    ] as const)
      turn.run("a", due * DAY, due * DAY, verdict);
    alert.run("a-1", "a", 1 * DAY, 0, 1 * DAY, null); // settled, old, before the pass: pruned
    alert.run("a-1-due", "a", 1 * DAY, 1, 1 * DAY, 50 * DAY); // still being retried: kept
    alert.run("a-3", "a", 3 * DAY, 0, 3 * DAY, null); // settled, old, but its streak goes on: kept
    alert.run("a-new", "a", 2 * DAY, 0, 40 * DAY, null); // settled, but not older than the cut-off: kept
    await pruneSettledAlerts(db, 30 * DAY, 100);
    const left = db.raw.prepare("SELECT delivery_id FROM alert_outbox ORDER BY delivery_id").all();
    expect(left.map((r) => r.delivery_id)).toEqual(["a-1-due", "a-3", "a-new"]);
  });
});
