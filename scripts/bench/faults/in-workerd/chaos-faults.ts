/**
 * Injects the faults of a chaos schedule (scripts/bench/chaos/schedule.ts) into a run inside
 * workerd, each as the fault table's rows inject it (./objects.faults.ts, ./flushes.faults.ts,
 * ./storage.faults.ts): an object reset through its state (memory gone, storage kept), its
 * alarm run or moved, a receiver's flushes refused or replayed, D1's windows table renamed
 * away, the seed set deleted from R2 or its reads made to throw (./seed-reads.ts), an abort
 * through the API, the target's knobs set to answer badly (./target-answers.ts). The setup
 * killed is injected as the run is created (./chaos-run.ts, killSetup here).
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { AggregationTree } from "../../../../core/plan/aggregation-tree.ts";
import { seedObjectKey } from "../../../../core/data/seed-set.ts";
import { aggregatorName, type ChildFlush, type FlushAck } from "../../../../core/run/protocol.ts";
import { ChildProgress } from "../../../../coordinator/merge/child-progress.ts";
import { FlushLog } from "../../../../coordinator/merge/flush-log.ts";
import { CHAOS_RUN, type ChaosFault, type Receiver } from "../../chaos/schedule.ts";
import { api, sleep } from "../../../../test/workers/helpers.ts";
import { answerBadly } from "./target-answers.ts";
import { throwSeedReads } from "./seed-reads.ts";

export const CHAOS_SEED = "chaos-users";
export const until = (atMs: number) => sleep(Math.max(0, atMs - Date.now()));
export const shardOf = (runId: string, index: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${index}`));
const aggregatorOf = (runId: string, index: number) => env.RUN_AGGREGATOR.get(env.RUN_AGGREGATOR.idFromName(aggregatorName(runId, index)));
export const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));

// --- Flushes: one wrapper per receiver class (its prototype is shared, so a restarted object keeps it), dispatching to the hooks of a run.
type Hook = (receiver: string, message: ChildFlush, original: (m: ChildFlush) => Promise<FlushAck>) => Promise<FlushAck> | null;
/** Each run's hooks; forgotten when its observation is over (forgetHooks). */
const hooks = new Map<string, Hook[]>();
export const forgetHooks = (runId: string) => hooks.delete(runId);
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

export async function treeOf(runId: string): Promise<AggregationTree | null> {
  const row = await env.DB.prepare("SELECT plan_json FROM runs WHERE id = ?").bind(runId).first<{ plan_json: string }>();
  return (JSON.parse(row!.plan_json) as { tree?: AggregationTree }).tree ?? null;
}

/** D1's windows table back in place (a schedule that failed half-way may have left it away). */
export async function restoreWindowsTable(): Promise<void> {
  const away = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'windows_away'").first();
  if (away) await env.DB.exec("ALTER TABLE windows_away RENAME TO windows");
}

export interface Played {
  readonly runId: string;
  readonly t0: number;
  readonly tree: AggregationTree | null;
  /** Its setup was killed: no shard of it ever started. */
  readonly setupKilled: boolean;
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
export async function inject(p: Played, f: ChaosFault, shards: number): Promise<void> {
  const at = p.t0 + f.atMs;
  switch (f.kind) {
    case "r2-missing":
    case "r2-throwing":
      return injectR2(p, f, shards);
    case "setup-killed":
      return; // done as the run was created (killSetup)
    case "d1-refusing":
    case "d1-refusing-long":
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
        // A shard never started (its run's setup killed) has no phase: it sends nothing either.
        if (states.every((s) => s.phase === "done" || s.phase === undefined)) return void (p.stoppedAfterMs = Date.now() - p.abortedAt);
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

/** The seed set missing from R2, or its reads throwing (since before the run was created: chaos-run.ts), until the fault's end. */
async function injectR2(p: Played, f: Extract<ChaosFault, { kind: "r2-missing" | "r2-throwing" }>, shards: number): Promise<void> {
  const key = seedObjectKey(CHAOS_SEED);
  if (f.kind === "r2-throwing") return throwSeedReads(key, p.t0 + f.untilMs, !p.setupKilled);
  const saved = (await env.SEEDS.get(key))!;
  const body = await saved.arrayBuffer();
  await env.SEEDS.delete(key);
  try {
    await missingBeforeFirstLoad(p, shards);
    await until(p.t0 + f.untilMs);
  } finally {
    await env.SEEDS.put(key, body, { httpMetadata: saved.httpMetadata, customMetadata: saved.customMetadata });
  }
}

/**
 * The r2-missing fault must meet the shards' first loads: the seed set is deleted right
 * after the run is created, and the shards load it at their first alarm, a second before
 * t0. A shard that had loaded it already would make the fault a no-op: the schedule could
 * not be played as drawn.
 */
async function missingBeforeFirstLoad(p: Played, shards: number): Promise<void> {
  const states = await Promise.all(Array.from({ length: shards }, (_, i) => shardOf(p.runId, i).inspect()));
  const loaded = states.filter((s) => (s.seedLoads ?? 0) > 0).length;
  if (loaded) throw new Error(`r2-missing: ${loaded} shard(s) had loaded the seed set before it was deleted`);
}

/**
 * Kills the setup of the run named `name` (POST /v1/runs under way): once its D1 row is
 * written (the coordinator writes it before setup), `intoSetupMs` after its creation, the
 * coordinator is restarted — if its record says it is still pending in setup; otherwise
 * the fault came too late and the schedule cannot be played. Resolves to the run, its
 * creation and its planned t0.
 */
export async function killSetup(name: string, intoSetupMs: number): Promise<{ runId: string; createdMs: number; t0Ms: number }> {
  const row = await waitForRow(name);
  await until(row.created_at + intoSetupMs);
  const coordinator = coordinatorOf(row.id);
  const record = await runInDurableObject(coordinator, (_instance, state) => state.storage.kv.get<{ status: string; t0Ms: number; phases?: unknown }>("run"));
  if (record?.status !== "pending" || record.phases)
    throw new Error(`setup-killed: the run was ${record?.status ?? "unknown"} ${Date.now() - row.created_at} ms after its creation, its setup over`);
  await runInDurableObject(coordinator, (_instance, state) => state.abort("chaos: restarted during setup")).catch(() => {});
  return { runId: row.id, createdMs: row.created_at, t0Ms: record.t0Ms };
}

async function waitForRow(name: string): Promise<{ id: string; created_at: number }> {
  for (const startedAt = Date.now(); Date.now() - startedAt < 10_000; await sleep(10)) {
    const row = await env.DB.prepare("SELECT id, created_at FROM runs WHERE name = ?").bind(name).first<{ id: string; created_at: number }>();
    if (row) return row;
  }
  throw new Error(`setup-killed: no run named ${name} in D1 after 10 s`);
}
