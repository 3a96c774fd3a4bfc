/**
 * The harness of the fault rows inside workerd (./objects.faults.ts, ./flushes.faults.ts,
 * ./storage.faults.ts): what a row is, the run it observes and how it is accounted.
 *
 * Every row is one run of 40 iterations/s for 5 s on two shards (200 iterations) against
 * the real local target, which counts what it receives. The rows of the aggregation tree
 * run six shards instead: with the fan-in of 2 this deployment is given, each region's
 * three shards report to two aggregators under a region root (core/plan/aggregation-tree.ts).
 * Each row runs once on its own and once with an API abort in the middle (unless it says
 * noAbort). Each test records its observation in `task.meta.fault` for ../run-faults.ts to
 * account and print; it fails only when the run cannot be observed at all (the table, not
 * an assertion, says whether a row is ok).
 */
import { env } from "cloudflare:workers";
import type { FaultObservation } from "../fault-table.ts";
import { aggregatorName } from "../../../../core/run/protocol.ts";
import type { AggregationTree } from "../../../../core/plan/aggregation-tree.ts";
import { api, createRun, sleep, waitForStatus } from "../../../../test/workers/helpers.ts";

const RATE = 40;
export const DURATION_MS = 5_000;
const SHARDS = 2;
export const TIMEOUT_MS = 2_000;
const SCHEDULED = (RATE * DURATION_MS) / 1000;
const ABORT_AFTER_MS = 2_500;

/** The tree rows' runs: six shards in two regions, through a tree of depth 2. */
export const TREE = { shards: 6, regions: ["wnam", "weur"] };

export const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
export const aggregatorOf = (runId: string, index: number) => env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(runId, index)));

/** The first level-1 aggregator of a run's tree (from its plan in D1). */
export async function leafAggregator(runId: string): Promise<{ index: number; region: string }> {
  const row = await env.DB.prepare("SELECT plan_json FROM runs WHERE id = ?").bind(runId).first<{ plan_json: string }>();
  const tree = (JSON.parse(row!.plan_json) as { tree?: AggregationTree }).tree;
  if (!tree) throw new Error(`run ${runId} has no aggregation tree`);
  return tree.aggregators.find((a) => a.level === 1)!;
}
export const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));
export const until = (atMs: number) => sleep(Math.max(0, atMs - Date.now()));

export interface Run {
  readonly id: string;
  readonly t0: number;
}

export interface Fault {
  readonly name: string;
  readonly spec?: Record<string, unknown>;
  readonly outcome: string;
  /** While the run goes (started right after it is created). */
  readonly during?: (run: Run) => Promise<void>;
  /** Once the run has ended, before it is accounted. */
  readonly after?: (run: Run) => Promise<void>;
  /** D1 is meant to hold only part of the run: count from the coordinator's summary. */
  readonly partialStore?: boolean;
  readonly note?: string;
  /** No abort variant: the fault happens after the run. */
  readonly noAbort?: boolean;
  /** The fault restarts shards: the row may lose what they counted interrupted (FaultObservation.lossBound). */
  readonly lossBound?: "interrupted";
}

async function received(runId: string): Promise<number> {
  const response = await fetch(`${env.TARGET_URL}/api/admin/test/request-ledger?run=${runId}`, {
    headers: { authorization: `Bearer ${env.TARGET_ADMIN_SECRET}` },
  });
  if (!response.ok) throw new Error(`request ledger: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { rows: Array<{ count: number }> };
  return body.rows.reduce((a, r) => a + r.count, 0);
}

async function stored(runId: string) {
  return (await env.DB.prepare(
    `SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(dropped), 0) AS dropped, COALESCE(SUM(requests), 0) AS requests,
            COALESCE(SUM(connection_errors), 0) AS connectionErrors, COALESCE(SUM(timeouts), 0) AS timeouts FROM windows WHERE run_id = ?`,
  )
    .bind(runId)
    .first<{ sent: number; dropped: number; requests: number; connectionErrors: number; timeouts: number }>())!;
}

/** Windows in D1 that lack a region's row: a window written in part. */
async function halfWrittenWindows(runId: string, regions: number): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT COUNT(*) AS n FROM (SELECT window_s FROM windows WHERE run_id = ? GROUP BY window_s HAVING COUNT(DISTINCT region) < ?)",
  )
    .bind(runId, regions)
    .first<{ n: number }>();
  return row!.n;
}

/**
 * Polls the shards until every one has stopped sending (phase done: an alarm may still guard
 * a final flush its receiver has not taken yet); ms since `fromMs`.
 */
async function shardsStopped(runId: string, shards: number, fromMs: number): Promise<number | null> {
  while (Date.now() - fromMs < 30_000) {
    const states = await Promise.all(Array.from({ length: shards }, (_, i) => shardOf(runId, i).inspect()));
    if (states.every((s) => s.phase === "done")) return Date.now() - fromMs;
    await sleep(50);
  }
  return null;
}

async function observe(fault: Fault, abort: boolean): Promise<FaultObservation> {
  const { id, startsAt } = await createRun({
    name: fault.name,
    rate: RATE,
    duration: `${DURATION_MS / 1000}s`,
    shards: SHARDS,
    regions: ["wnam", "weur"],
    timeout: `${TIMEOUT_MS / 1000}s`,
    ...fault.spec,
  });
  const run = { id, t0: Date.parse(startsAt) };
  const during = fault.during?.(run).catch((error: unknown) => error);
  let timeMs: number | null = null;
  if (abort) {
    await until(run.t0 + ABORT_AFTER_MS);
    const abortedAt = Date.now();
    const response = await api(`/v1/runs/${id}/abort`, { method: "POST" });
    if (response.status !== 202) throw new Error(`abort answered ${response.status}: ${await response.text()}`);
    timeMs = await shardsStopped(id, Number(fault.spec?.shards ?? SHARDS), abortedAt);
  }
  const final = await waitForStatus(id, undefined, 120_000);
  const endedAt = Date.now();
  const failure = await during;
  if (failure) throw failure;
  await fault.after?.(run);
  if (!abort) timeMs = Math.max(0, endedAt - (run.t0 + DURATION_MS));

  const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as {
    metrics: Record<string, { count: number }>;
    edgeload: { totals: { sent: number; timeouts: number; connectionErrors: number; interrupted: number } };
  };
  const inD1 = await stored(id);
  const fromSummary = {
    sent: summary.edgeload.totals.sent,
    dropped: summary.metrics.dropped_iterations?.count ?? 0,
    connectionErrors: summary.edgeload.totals.connectionErrors,
    timeouts: summary.edgeload.totals.timeouts,
  };
  const counts = fault.partialStore ? fromSummary : inD1;
  const halfWritten = await halfWrittenWindows(id, 2);
  const note = [
    fault.note,
    fault.partialStore
      ? `D1 holds ${inD1.requests} of ${summary.metrics.http_reqs?.count ?? 0} requests${halfWritten ? `, ${halfWritten} window(s) in part` : ", no window in part"}`
      : undefined,
  ]
    .filter(Boolean)
    .join("; ");
  return {
    fault: abort ? `${fault.name} + API abort at 2.5 s` : fault.name,
    scheduled: SCHEDULED,
    stoppedEarly: abort || fault.outcome === "error",
    outcome: String(final.status),
    // An abort ends the run aborted whatever its figures would have said; an error ends it before.
    expectedOutcome: abort && fault.outcome !== "error" && fault.outcome !== "failed" ? "aborted" : fault.outcome,
    ...counts,
    received: await received(id),
    summaryRequests: summary.metrics.http_reqs?.count ?? 0,
    storedRequests: fault.partialStore ? null : inD1.requests,
    timeMs,
    timeLabel: abort ? "stop" : "recover",
    ...(fault.lossBound ? { lossBound: summary.edgeload.totals.interrupted } : {}),
    ...(note && !abort ? { note } : {}),
  };
}

/**
 * Each fault's rows: on its own, and with an API abort unless it says noAbort. Each
 * .faults.ts file registers them as its own tests (`it` stays in the test file, where a
 * reader and vitest's static listing look for it), recording `task.meta.fault`.
 */
export function faultRows(faults: readonly Fault[]): Array<{ title: string; observe: () => Promise<FaultObservation> }> {
  return faults.flatMap((fault) =>
    (fault.noAbort ? [false] : [false, true]).map((abort) => ({
      title: abort ? `${fault.name} + API abort` : fault.name,
      observe: () => observe(fault, abort),
    })),
  );
}

declare module "vitest" {
  interface TaskMeta {
    fault?: FaultObservation;
  }
}
