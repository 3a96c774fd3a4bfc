/**
 * Plays a chaos schedule (scripts/bench/chaos/schedule.ts) over one run inside workerd and
 * observes what it left: the in-workerd half of `npm run bench -- chaos` (./chaos.seeds.ts)
 * and of the fixed seeds in `npm test` (test/workers-tree/chaos-seeds.test.ts). Each fault is injected as the fault table's rows inject it
 * (scripts/bench/faults/in-workerd/): an object reset through its state (memory gone,
 * storage kept), its alarm run or moved, a receiver's flushes refused or replayed, D1's
 * windows table renamed away, the seed set deleted from R2, an abort through the API, the
 * target's knobs set to answer badly (./target-answers.ts, which also counts what the
 * target answered).
 *
 * Needs a deployment with an aggregator fan-in of 2, the target's admin secret
 * (TARGET_ADMIN_SECRET, to read its request ledger) and the seed set of `uploadChaosSeed`.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { AggregationTree } from "../../../../core/plan/aggregation-tree.ts";
import { seedObjectKey } from "../../../../core/data/seed-set.ts";
import { aggregatorName, type ChildFlush, type FlushAck } from "../../../../core/run/protocol.ts";
import { ChildProgress } from "../../../../coordinator/merge/child-progress.ts";
import { FlushLog } from "../../../../coordinator/merge/flush-log.ts";
import type { ChaosObservation } from "../../chaos/invariants.ts";
import { CHAOS_RUN, faultsOverAtMs, REGIONS, SHAPES, type ChaosFault, type ChaosSchedule, type Receiver } from "../../chaos/schedule.ts";
import { api, createRun, sleep, waitForStatus } from "../../../../test/workers/helpers.ts";
import { answerBadly, answersOf, watchAnswers, wrapFetch } from "./target-answers.ts";

const SEED = "chaos-users";
const until = (atMs: number) => sleep(Math.max(0, atMs - Date.now()));
const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
const aggregatorOf = (runId: string, index: number) => env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(runId, index)));
const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));

/** Uploads the seed set every chaos run reads (so that R2 can be made to fail). */
export async function uploadChaosSeed(): Promise<void> {
  const users = Array.from({ length: 50 }, (_, i) => ({ email: `chaos-${i}@example.test`, userId: `u${i}` }));
  const response = await api(`/v1/seeds/${SEED}`, { method: "PUT", body: JSON.stringify({ users }) });
  if (!response.ok) throw new Error(`seed upload: ${response.status} ${await response.text()}`);
}

// --- Log lines: every console call of this isolate (the objects run in it), kept to be searched for secrets.
const logLines: string[] = [];
let consoleWrapped = false;
function captureConsole(): void {
  if (consoleWrapped) return;
  consoleWrapped = true;
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      logLines.push(args.map((a) => (typeof a === "string" ? a : (JSON.stringify(a) ?? String(a)))).join(" "));
      if (logLines.length > 20_000) logLines.splice(0, 10_000);
      original(...args);
    };
  }
}

// --- Flushes: one wrapper per receiver class (its prototype is shared, so a restarted object keeps it), dispatching to the hooks of a run.
type Hook = (receiver: string, message: ChildFlush, original: (m: ChildFlush) => Promise<FlushAck>) => Promise<FlushAck> | null;
const hooks = new Map<string, Hook[]>();
const wrapped = new WeakSet<object>();

async function wrapFlushes(stub: DurableObjectStub, kind: "coordinator" | "aggregator"): Promise<void> {
  type Flush = (this: { ctx: DurableObjectState }, m: ChildFlush) => Promise<FlushAck>;
  await runInDurableObject(stub, (instance) => {
    const proto = Object.getPrototypeOf(instance) as { flush: Flush };
    if (wrapped.has(proto)) return;
    wrapped.add(proto);
    const original = proto.flush;
    proto.flush = function (this: { ctx: DurableObjectState }, message: ChildFlush) {
      const call = (m: ChildFlush) => original.call(this, m);
      const receiver = kind === "coordinator" ? "coordinator" : `aggregator ${this.ctx.storage.kv.get<{ index: number }>("node")?.index}`;
      for (const hook of hooks.get(message.runId) ?? []) {
        const answer = hook(receiver, message, call);
        if (answer) return answer;
      }
      return call(message);
    };
  });
}

/** The windows a receiver accepted so far, as sent, with each child's last telemetry. */
async function acceptedFlushes(stub: DurableObjectStub, runId: string): Promise<ChildFlush[]> {
  return runInDurableObject(stub, (_instance, state) => {
    const progress = new ChildProgress(state.storage.sql);
    return new FlushLog(state.storage.sql).keptWindows().map(
      ({ child, window }): ChildFlush => ({
        runId,
        childIndex: child,
        windows: [window],
        watermarkS: 0,
        done: false,
        telemetry: progress.telemetry(child) ?? { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 },
      }),
    );
  });
}

async function treeOf(runId: string): Promise<AggregationTree | null> {
  const row = await env.DB.prepare("SELECT plan_json FROM runs WHERE id = ?").bind(runId).first<{ plan_json: string }>();
  return (JSON.parse(row!.plan_json) as { tree?: AggregationTree }).tree ?? null;
}

/** D1's windows table back in place (a schedule that failed half-way may have left it away). */
async function restoreWindowsTable(): Promise<void> {
  const away = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'windows_away'").first();
  if (away) await env.DB.exec("ALTER TABLE windows_away RENAME TO windows");
}

interface Played {
  readonly runId: string;
  readonly t0: number;
  readonly tree: AggregationTree | null;
  abortedAt: number | null;
  stoppedAfterMs: number | null;
}

function receiverStub(p: Played, r: Receiver): { stub: DurableObjectStub; name: string } {
  if (r.kind === "coordinator") return { stub: coordinatorOf(p.runId), name: "coordinator" };
  const index = p.tree!.aggregators.filter((a) => a.level === 1)[r.leaf]!.index;
  return { stub: aggregatorOf(p.runId, index), name: `aggregator ${index}` };
}

/**
 * Retries an injection the object refused (a call into an object another fault is
 * restarting fails as a sender's call would; a sender would call again).
 */
async function persistently<T>(inject: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inject();
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(200 * attempt);
    }
  }
}

/** Injects one fault at its moment; resolves when it is over. */
async function inject(p: Played, f: ChaosFault, shards: number): Promise<void> {
  const at = p.t0 + f.atMs;
  switch (f.kind) {
    case "r2-missing": {
      const key = seedObjectKey(SEED);
      const saved = (await env.SEEDS.get(key))!;
      const body = await saved.arrayBuffer();
      await env.SEEDS.delete(key);
      await until(p.t0 + f.untilMs);
      await env.SEEDS.put(key, body, { httpMetadata: saved.httpMetadata, customMetadata: saved.customMetadata });
      return;
    }
    case "d1-refusing":
      await until(at);
      await env.DB.exec("ALTER TABLE windows RENAME TO windows_away");
      await until(p.t0 + f.untilMs);
      await restoreWindowsTable();
      return;
    case "unreachable": {
      const { stub, name } = receiverStub(p, f.receiver);
      await persistently(() => wrapFlushes(stub, f.receiver.kind));
      const from = at;
      const to = p.t0 + f.untilMs;
      const hook: Hook = (receiver, message, original) => {
        if (receiver !== name) return null;
        const now = Date.now();
        if (now >= from && now < to) return Promise.reject(new Error("chaos: receiver unreachable"));
        return f.reorder && now >= to ? original({ ...message, windows: [...message.windows].reverse() }) : null;
      };
      hooks.set(p.runId, [...(hooks.get(p.runId) ?? []), hook]);
      return;
    }
    case "replay-accepted": {
      await until(at);
      const receiver = () => receiverStub(p, f.receiver).stub as unknown as { flush(m: ChildFlush): Promise<FlushAck> };
      for (const message of await persistently(() => acceptedFlushes(receiverStub(p, f.receiver).stub, p.runId)))
        await receiver()
          .flush(message)
          .catch(() => {}); // refused (unreachable, restarting): this resend does not arrive
      return;
    }
    case "bad-target":
      await until(at);
      await answerBadly(p.runId, f.answer, CHAOS_RUN.timeoutMs, p.t0 + f.untilMs);
      return;
    case "abort": {
      await until(at);
      p.abortedAt = Date.now();
      const response = await api(`/v1/runs/${p.runId}/abort`, { method: "POST" });
      if (response.status !== 202) throw new Error(`abort answered ${response.status}: ${await response.text()}`);
      while (Date.now() - p.abortedAt < 30_000) {
        const states = await Promise.all(Array.from({ length: shards }, (_, i) => shardOf(p.runId, i).inspect()));
        // Done is stopped sending; an alarm may still guard a final flush its receiver has not taken yet.
        if (states.every((s) => s.phase === "done")) return void (p.stoppedAfterMs = Date.now() - p.abortedAt);
        await sleep(50);
      }
      return;
    }
  }
  await until(at);
  const reset = (stub: DurableObjectStub) => runInDurableObject(stub, (_instance, state) => state.abort("chaos: restarted")).catch(() => {});
  if (f.kind === "shard-restart") await reset(shardOf(p.runId, f.shard));
  else if (f.kind === "coordinator-restart") await reset(coordinatorOf(p.runId));
  else if (f.kind === "aggregator-restart") {
    const index = f.which === "root" ? p.tree!.roots[0]! : p.tree!.aggregators.filter((a) => a.level === 1)[f.which === "leaf-0" ? 0 : 1]!.index;
    await reset(aggregatorOf(p.runId, index));
  } else if (f.kind === "alarm-twice")
    await persistently(() =>
      runInDurableObject(shardOf(p.runId, f.shard), (instance) => void (instance as unknown as { alarm(): Promise<void> }).alarm().catch(() => {})),
    );
  else if (f.kind === "alarm-late")
    await persistently(() => runInDurableObject(shardOf(p.runId, f.shard), (_instance, state) => state.storage.setAlarm(Date.now() + f.lateMs)));
}

const SECRET_PREFIX = "chaos-secret-";

/** Where any of `secrets` appears: the run's D1 rows, its API answers, the log lines since `fromLine`. */
async function secretsIn(runId: string, secrets: readonly string[], fromLine: number): Promise<string[]> {
  const found: string[] = [];
  const has = (text: string) => secrets.some((s) => text.includes(s));
  const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{
    name: string;
  }>();
  for (const { name } of tables.results) {
    const columns = await env.DB.prepare(`SELECT name FROM pragma_table_info('${name}')`).all<{ name: string }>();
    if (!columns.results.some((c) => c.name === "run_id")) continue;
    const rows = await env.DB.prepare(`SELECT * FROM ${name} WHERE run_id = ?`).bind(runId).all();
    if (has(JSON.stringify(rows.results))) found.push(`D1 ${name}`);
  }
  for (const path of [`/v1/runs/${runId}`, `/v1/runs/${runId}/summary`]) if (has(await (await api(path)).text())) found.push(`GET ${path}`);
  if (logLines.slice(fromLine).some(has)) found.push("log lines");
  return found;
}

/** Plays `schedule` over one run and observes it. */
export async function playSchedule(schedule: ChaosSchedule): Promise<ChaosObservation> {
  captureConsole();
  wrapFetch();
  await restoreWindowsTable();
  const fromLine = logLines.length;
  const shards = SHAPES[schedule.shape].shards;
  const secrets = [`${SECRET_PREFIX}${schedule.seed}-a${crypto.randomUUID()}`, `${SECRET_PREFIX}${schedule.seed}-b${crypto.randomUUID()}`];
  const { id, startsAt } = await createRun({
    name: `chaos ${schedule.shape} seed ${schedule.seed}`,
    rate: CHAOS_RUN.ratePerS,
    duration: `${CHAOS_RUN.durationMs / 1000}s`,
    timeout: `${CHAOS_RUN.timeoutMs / 1000}s`,
    // Iterations in progress at the end get the timeout, not k6's default 30 s gracefulStop:
    // a run whose shard went silent still ends within END_WITHIN_MS (end + 2 + 15 s).
    gracefulStop: `${CHAOS_RUN.timeoutMs / 1000}s`,
    shards,
    regions: [...REGIONS],
    data: { seed: SEED },
    secrets: { token: secrets[0] },
    steps: [
      {
        path: "/delay?ms=5&user={{data.userId}}",
        headers: { "x-key": "{{secrets.token}}", authorization: `Bearer ${secrets[1]}` },
        checks: [{ status: 200, bodyIncludes: '"ok":true' }],
      },
    ],
  });
  watchAnswers(id, CHAOS_RUN.timeoutMs);
  const played: Played = { runId: id, t0: Date.parse(startsAt), tree: await treeOf(id), abortedAt: null, stoppedAfterMs: null };
  const injections = Promise.allSettled(schedule.faults.map((f) => inject(played, f, shards)));
  try {
    const final = await waitForStatus(id, undefined, 180_000);
    const finalAt = Date.now();
    const failed = (await injections).filter((r) => r.status === "rejected");
    if (failed.length) throw new Error(`chaos: a fault could not be injected: ${(failed[0] as PromiseRejectedResult).reason}`);
    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as {
      metrics: Record<string, { count: number }>;
      edgeload: { totals: { sent: number; interrupted: number; notSent: { share: number; bound: number } } };
    };
    const stored = (await env.DB.prepare(
      `SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(dropped), 0) AS dropped, COALESCE(SUM(requests), 0) AS requests,
              COALESCE(SUM(connection_errors), 0) AS connectionErrors, COALESCE(SUM(timeouts), 0) AS timeouts,
              COALESCE(SUM(status_5xx), 0) AS status5xx, COALESCE(SUM(checks_failed), 0) AS checksFailed FROM windows WHERE run_id = ?`,
    )
      .bind(id)
      .first<ChaosObservation["stored"]>())!;
    const shardRows = (await env.DB.prepare("SELECT COUNT(*) AS count, COALESCE(SUM(requests), 0) AS requests FROM shards WHERE run_id = ?")
      .bind(id)
      .first<ChaosObservation["shardRows"]>())!;
    const ledger = await fetch(`${env.TARGET_URL}/api/admin/test/request-ledger?run=${id}`, {
      headers: { authorization: `Bearer ${env.TARGET_ADMIN_SECRET}` },
    });
    if (!ledger.ok) throw new Error(`request ledger: ${ledger.status} ${await ledger.text()}`);
    const received = ((await ledger.json()) as { rows: Array<{ count: number }> }).rows.reduce((a, r) => a + r.count, 0);
    const scheduleOverAt = played.t0 + Math.max(CHAOS_RUN.durationMs, faultsOverAtMs(schedule));
    return {
      schedule,
      runId: id,
      status: String(final.status),
      received,
      stored,
      summary: {
        sent: summary.edgeload.totals.sent,
        requests: summary.metrics.http_reqs?.count ?? 0,
        interrupted: summary.edgeload.totals.interrupted,
        notSent: summary.edgeload.totals.notSent,
      },
      shardRows,
      shardsDone: Number(final.live?.shardsDone ?? 0),
      endedAfterMs: Math.max(0, finalAt - scheduleOverAt),
      stoppedAfterMs: played.stoppedAfterMs,
      fetched: answersOf(id),
      secretsFound: await secretsIn(id, secrets, fromLine),
    };
  } finally {
    await injections;
    hooks.delete(id);
    await restoreWindowsTable();
  }
}
