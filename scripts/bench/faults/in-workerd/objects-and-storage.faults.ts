/**
 * Fault rows inside workerd: the run's objects restarted, their alarms doubled and delayed,
 * their flushes replayed and reordered, the coordinator gone, D1 refusing writes, the seed
 * set missing from R2 — each once on its own and once with an API abort in the middle.
 *
 * Every row is one run of 40 iterations/s for 5 s on two shards (200 iterations) against
 * the real local target, which counts what it receives. The rows of the aggregation tree
 * run six shards instead: with the fan-in of 2 this deployment is given, each region's
 * three shards report to two aggregators under a region root (core/plan/aggregation-tree.ts). Each test records its observation
 * in `task.meta.fault` for ../run-faults.ts to account and print; it fails only when the
 * run cannot be observed at all (the table, not an assertion, says whether a row is ok).
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, it } from "vitest";
import type { FaultObservation } from "../fault-table.ts";
import { aggregatorName, type ChildFlush, type FlushAck } from "../../../../core/run/protocol.ts";
import type { AggregationTree } from "../../../../core/plan/aggregation-tree.ts";
import { seedObjectKey } from "../../../../core/data/seed-set.ts";
import { FlushLog } from "../../../../coordinator/merge/flush-log.ts";
import { api, createRun, sleep, waitForStatus } from "../../../../test/workers/helpers.ts";

const RATE = 40;
const DURATION_MS = 5_000;
const SHARDS = 2;
const TIMEOUT_MS = 2_000;
const SCHEDULED = (RATE * DURATION_MS) / 1000;
const ABORT_AFTER_MS = 2_500;

/** The tree rows' runs: six shards in two regions, through a tree of depth 2. */
const TREE = { shards: 6, regions: ["wnam", "weur"] };

const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
const aggregatorOf = (runId: string, index: number) => env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(runId, index)));

/** The first level-1 aggregator of a run's tree (from its plan in D1). */
async function leafAggregator(runId: string): Promise<{ index: number; region: string }> {
  const row = await env.DB.prepare("SELECT plan_json FROM runs WHERE id = ?").bind(runId).first<{ plan_json: string }>();
  const tree = (JSON.parse(row!.plan_json) as { tree?: AggregationTree }).tree;
  if (!tree) throw new Error(`run ${runId} has no aggregation tree`);
  return tree.aggregators.find((a) => a.level === 1)!;
}
const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));
const until = (atMs: number) => sleep(Math.max(0, atMs - Date.now()));

interface Run {
  readonly id: string;
  readonly t0: number;
}

interface Fault {
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

/** Resets an object as a crash or an eviction would: its memory is gone, its storage stays. */
async function restart(stub: DurableObjectStub): Promise<void> {
  await runInDurableObject(stub, (_instance, state) => state.abort("fault: restarted")).catch(() => {});
}

/**
 * Wraps the `flush` of a run's coordinator (or of one of its aggregators) for that run (the
 * prototype is shared by every instance in this isolate, so a restarted object keeps the
 * fault). Returns the undo.
 */
async function interceptFlushes(
  runId: string,
  wrap: (message: ChildFlush, original: (m: ChildFlush) => Promise<FlushAck>) => Promise<FlushAck>,
  aggregator?: number,
): Promise<() => void> {
  let undo = () => {};
  type Flush = (this: { ctx: DurableObjectState }, m: ChildFlush) => Promise<FlushAck>;
  const stub = aggregator === undefined ? coordinatorOf(runId) : aggregatorOf(runId, aggregator);
  await runInDurableObject(stub, (instance) => {
    const proto = Object.getPrototypeOf(instance) as { flush: Flush };
    const original = proto.flush;
    proto.flush = function (this: { ctx: DurableObjectState }, message: ChildFlush) {
      const call = (m: ChildFlush) => original.call(this, m);
      const node = aggregator === undefined ? null : this.ctx.storage.kv.get<{ index: number }>("node");
      const mine = message.runId === runId && (aggregator === undefined || node?.index === aggregator);
      return mine ? wrap(message, call) : call(message);
    };
    undo = () => void (proto.flush = original);
  });
  return undo;
}

/** The windows the coordinator (or one aggregator) has accepted so far, as they were sent. */
async function acceptedWindows(runId: string, aggregator?: number): Promise<Array<{ shard: number; window: ChildFlush["windows"][number] }>> {
  return runInDurableObject(aggregator === undefined ? coordinatorOf(runId) : aggregatorOf(runId, aggregator), (_instance, state) =>
    new FlushLog(state.storage.sql).keptWindows().map(({ child, window }) => ({ shard: child, window })),
  );
}

const telemetry = { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 };

const renameWindows = (from: string, to: string) => env.DB.exec(`ALTER TABLE ${from} RENAME TO ${to}`);

const SEED = "fault-users";

const faults: Fault[] = [
  { name: "no fault (reference)", outcome: "passed" },
  {
    name: "shard 0 restarted mid-window, 3 times",
    outcome: "passed",
    note:
      "a restarted shard resumes at the current time: what fell due while it was down is counted as dropped (interrupted), never replayed. " +
      "Lost: requests shard 0 had sent in its open windows when it was killed reached the target, but their results died with it; each is counted interrupted, the row's bound",
    lossBound: "interrupted",
    async during({ id, t0 }) {
      for (const at of [1_300, 2_600, 3_900]) {
        await until(t0 + at);
        await restart(shardOf(id, 0));
      }
    },
  },
  {
    name: "alarm delivered twice at once",
    outcome: "passed",
    async during({ id, t0 }) {
      await until(t0 + 1_500);
      await runInDurableObject(shardOf(id, 0), (instance) => {
        void (instance as unknown as { alarm(): Promise<void> }).alarm().catch(() => {});
      });
    },
  },
  {
    name: "alarm delivered again after the run",
    outcome: "passed",
    noAbort: true,
    async after({ id }) {
      for (const stub of [shardOf(id, 0), shardOf(id, 1), coordinatorOf(id)]) {
        await runInDurableObject(stub, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm());
      }
      await sleep(1_000);
    },
  },
  {
    name: "first alarm 2.5 s late (past two windows)",
    outcome: "passed",
    async during({ id, t0 }) {
      await runInDurableObject(shardOf(id, 0), (_instance, state) => state.storage.setAlarm(t0 + 2_500));
    },
  },
  {
    name: "every accepted window flushed again",
    outcome: "passed",
    async during({ id, t0 }) {
      await until(t0 + 3_000);
      for (const { shard, window } of await acceptedWindows(id)) {
        await coordinatorOf(id).flush({ runId: id, childIndex: shard, windows: [window], watermarkS: 0, done: false, telemetry });
      }
    },
  },
  {
    name: "windows out of order (held 3.5 s, sent newest first)",
    outcome: "passed",
    async during({ id, t0 }) {
      const undo = await interceptFlushes(id, (message, original) => {
        if (message.childIndex !== 0) return original(message);
        if (Date.now() < t0 + 3_500) return Promise.reject(new Error("fault: flush held back"));
        return original({ ...message, windows: [...message.windows].reverse() });
      });
      await until(t0 + DURATION_MS + 15_000);
      undo();
    },
  },
  {
    name: "coordinator restarted mid-run, twice",
    outcome: "passed",
    async during({ id, t0 }) {
      for (const at of [1_500, 3_000]) {
        await until(t0 + at);
        await restart(coordinatorOf(id));
      }
    },
  },
  {
    name: "coordinator unreachable until the shards' deadline",
    outcome: "passed",
    note: "shards keep their windows and stop at their deadline by themselves; their final flushes retry (with backoff) until the coordinator answers",
    async during({ id, t0 }) {
      const reachableAt = t0 + DURATION_MS + TIMEOUT_MS;
      const undo = await interceptFlushes(id, (message, original) =>
        Date.now() < reachableAt ? Promise.reject(new Error("fault: coordinator unreachable")) : original(message),
      );
      await until(reachableAt + 20_000);
      undo();
    },
  },
  { name: "through an aggregation tree, no fault (reference)", outcome: "passed", spec: TREE },
  {
    name: "aggregator restarted mid-window, twice",
    outcome: "passed",
    spec: TREE,
    note: "it replays the windows it had not passed up from its log; what it passed up goes again under the same part, skipped above",
    async during({ id, t0 }) {
      const leaf = await leafAggregator(id);
      for (const at of [1_300, 2_600]) {
        await until(t0 + at);
        await restart(aggregatorOf(id, leaf.index));
      }
    },
  },
  {
    name: "every window an aggregator accepted delivered to it again",
    outcome: "passed",
    spec: TREE,
    async during({ id, t0 }) {
      const leaf = await leafAggregator(id);
      await until(t0 + 3_000);
      for (const { shard, window } of await acceptedWindows(id, leaf.index)) {
        await aggregatorOf(id, leaf.index).flush({
          runId: id,
          childIndex: shard,
          windows: [window],
          watermarkS: 0,
          done: false,
          telemetry: { ...telemetry, region: leaf.region },
        });
      }
    },
  },
  {
    name: "aggregator unreachable until the shards' deadline",
    outcome: "passed",
    spec: TREE,
    note: "its shards keep their windows and stop at their deadline; their final flushes retry until it answers, and it passes them up",
    async during({ id, t0 }) {
      const leaf = await leafAggregator(id);
      const reachableAt = t0 + DURATION_MS + TIMEOUT_MS;
      const undo = await interceptFlushes(
        id,
        (message, original) => (Date.now() < reachableAt ? Promise.reject(new Error("fault: aggregator unreachable")) : original(message)),
        leaf.index,
      );
      await until(reachableAt + 20_000);
      undo();
    },
  },
  {
    name: "D1 refusing writes for 5 s",
    outcome: "passed",
    async during({ t0 }) {
      await until(t0 + 1_000);
      await renameWindows("windows", "windows_away");
      await until(t0 + 6_000);
      await renameWindows("windows_away", "windows");
    },
  },
  {
    name: "D1 refusing writes past the retry budget",
    outcome: "error",
    partialStore: true,
    note: "the run ends `error`; D1 keeps the windows written before the failure, whole; the coordinator's summary (GET /summary) keeps everything merged",
    async during({ t0 }) {
      await until(t0 + 1_000);
      await renameWindows("windows", "windows_away");
    },
    async after() {
      await renameWindows("windows_away", "windows");
    },
  },
  {
    name: "R2 seed read failing at first load",
    outcome: "passed",
    spec: { data: { seed: SEED }, steps: [{ path: "/delay?ms=5&user={{data.userId}}", checks: [{ status: 200 }] }] },
    note: "the shard's first alarm fails; the runtime retries it, and the iterations that fell due meanwhile are sent late (schedule lag) or dropped",
    async during({ t0 }) {
      const key = seedObjectKey(SEED);
      const saved = (await env.SEEDS.get(key))!;
      const body = await saved.arrayBuffer();
      await env.SEEDS.delete(key);
      await until(t0 + 1_000);
      await env.SEEDS.put(key, body, { httpMetadata: saved.httpMetadata, customMetadata: saved.customMetadata });
    },
  },
];

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
    expectedOutcome: abort && fault.outcome === "passed" ? "aborted" : fault.outcome,
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

describe("faults inside workerd", () => {
  it("uploads the seed set the R2 row reads", async () => {
    const users = Array.from({ length: 50 }, (_, i) => ({ email: `fault-${i}@example.test`, userId: `u${i}` }));
    const response = await api(`/v1/seeds/${SEED}`, { method: "PUT", body: JSON.stringify({ users }) });
    if (!response.ok) throw new Error(`seed upload: ${response.status} ${await response.text()}`);
  });

  for (const fault of faults) {
    for (const abort of fault.noAbort ? [false] : [false, true]) {
      it(abort ? `${fault.name} + API abort` : fault.name, async ({ task }) => {
        task.meta.fault = await observe(fault, abort);
      });
    }
  }
});

declare module "vitest" {
  interface TaskMeta {
    fault?: FaultObservation;
  }
}
