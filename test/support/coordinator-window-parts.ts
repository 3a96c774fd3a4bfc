/**
 * What the coordinator's window-path tests share (coordinator/run/window-writes*.test.ts):
 * a two-shard run at T0, and the coordinator's window-writing parts over one SQL storage,
 * as the object builds them — again after a restart, from what its log and checkpoint hold.
 */
import { planRun } from "../../core/plan/plan.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { ChildProgress } from "../../coordinator/merge/child-progress.ts";
import { FlushLog, type TotalsCheckpoint } from "../../coordinator/merge/flush-log.ts";
import { OpenWindows } from "../../coordinator/merge/open-windows.ts";
import { LiveFeed } from "../../coordinator/run/live-feed.ts";
import { takeInLog } from "../../coordinator/run/log-replay.ts";
import type { RunRecord } from "../../coordinator/run/run-record.ts";
import { UnwrittenWindows } from "../../coordinator/run/window-writes.ts";
import { recordingD1, type RecordedStatement } from "./recording-d1.ts";

export const T0 = 1_000_000;

/** A 20 s run at 6/s over two shards in one region, running since T0. */
export function twoShardRun(): RunRecord {
  const parsed = parseRunSpec({
    target: "https://auth.example.com",
    steps: [{ path: "/userinfo" }],
    executor: "constant-arrival-rate",
    rate: 6,
    duration: "20s",
    regions: ["wnam"],
    shards: 2,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const planned = planRun(parsed.spec, 120);
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  return {
    runId: "r",
    spec: parsed.spec,
    plan: planned.plan,
    mode: "local",
    createdMs: T0,
    t0Ms: T0,
    status: "running",
    stopping: null,
    endMs: null,
    abortReason: null,
  };
}

/** The window-writing parts over `sql` and `db`, and the totals rebuilt from the log (and `checkpoint`). */
export function windowParts(sql: SqlStorage, db: D1Database, run: RunRecord, checkpoint?: TotalsCheckpoint) {
  const parts = {
    db,
    log: new FlushLog(sql),
    open: new OpenWindows(),
    unwritten: new UnwrittenWindows(),
    shards: new ChildProgress(sql),
    live: new LiveFeed(sql),
  };
  return { parts, totals: takeInLog(parts.log, parts.open, parts.unwritten, checkpoint, run) as RunTotals };
}

/** A recording D1 that refuses every batch while `state.fail` is set and hands the others to `onBatch`. */
export function refusableD1(state: { readonly fail: boolean }, onBatch: (statements: readonly RecordedStatement[]) => void): D1Database {
  return recordingD1((statements) => {
    if (state.fail) throw new Error("D1 is refusing writes");
    onBatch(statements);
  }).db;
}
