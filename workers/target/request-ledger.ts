/**
 * What the target received of each edgeload run, so a run can be reconciled: requests the
 * client says it sent against requests that arrived, per second and per step.
 *
 * edgeload tags every request it sends with `x-edgeload-run: <run id>;<second>;<step>`
 * (the run-relative second it was sent in and the step's index; workers/shard/engine.ts).
 * This middleware counts each tagged request on arrival, before anything can fail, in a
 * buffer of the isolate; the buffer goes to the run's RequestLedger Durable Object in one
 * call at most every FLUSH_MS, so counting costs a map increment per request rather than
 * an RPC. `GET /api/admin/test/request-ledger?run=ID` (admin) flushes this isolate's
 * buffer and answers the counts. The local target runs one isolate, so its answer is
 * complete; a deployed target with many isolates is complete FLUSH_MS after the last
 * request.
 */
import { DurableObject } from "cloudflare:workers";
import type { Context, MiddlewareHandler } from "hono";
import { RUN_HEADER } from "../../core/run/protocol.ts";

const FLUSH_MS = 250;
const RUN_ID = /^r-[0-9a-z]{6,12}-[0-9a-f]{8}$/;

export interface LedgerEnv {
  readonly REQUEST_LEDGER: DurableObjectNamespace<RequestLedger>;
}

/** Received requests of one run: `second|step` → count. */
const buffer = new Map<string, Map<string, number>>();
let flushScheduled = false;
/**
 * Flushes on their way to a ledger: a read waits for them, since a scheduled flush may
 * have taken the buffer just before the read's own flush found it empty.
 */
const flushing = new Set<Promise<void>>();

const ledgerOf = (env: LedgerEnv, runId: string) => env.REQUEST_LEDGER.get(env.REQUEST_LEDGER.idFromName(runId));

/** Counts a tagged request on arrival; untagged requests pass untouched. */
export const countRunRequests: MiddlewareHandler<{ Bindings: LedgerEnv }> = async (c, next) => {
  const tag = c.req.header(RUN_HEADER);
  if (tag) {
    const [runId, second, step] = tag.split(";");
    if (runId && RUN_ID.test(runId) && /^\d{1,7}$/.test(second ?? "") && /^\d{1,4}$/.test(step ?? "")) {
      const counts = buffer.get(runId) ?? buffer.set(runId, new Map()).get(runId)!;
      const key = `${second}|${step}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (!flushScheduled) {
        flushScheduled = true;
        c.executionCtx.waitUntil(new Promise((resolve) => setTimeout(resolve, FLUSH_MS)).then(() => flush(c.env)));
      }
    }
  }
  await next();
};

/** Moves this isolate's buffer (or one run's part of it) to the ledgers. */
function flush(env: LedgerEnv, onlyRun?: string): Promise<void> {
  const done = moveToLedgers(env, onlyRun).finally(() => flushing.delete(done));
  flushing.add(done);
  return done;
}

async function moveToLedgers(env: LedgerEnv, onlyRun?: string): Promise<void> {
  if (!onlyRun) flushScheduled = false;
  const runs = onlyRun ? (buffer.has(onlyRun) ? [onlyRun] : []) : [...buffer.keys()];
  await Promise.all(
    runs.map(async (runId) => {
      const counts = buffer.get(runId)!;
      buffer.delete(runId);
      const rows = [...counts].map(([key, n]) => {
        const [second, step] = key.split("|").map(Number) as [number, number];
        return [second, step, n] as const;
      });
      try {
        await ledgerOf(env, runId).add(rows);
      } catch (error) {
        // Not counted yet: back into the buffer for the next flush, never lost.
        const again = buffer.get(runId) ?? buffer.set(runId, new Map()).get(runId)!;
        for (const [second, step, n] of rows) again.set(`${second}|${step}`, (again.get(`${second}|${step}`) ?? 0) + n);
        throw error;
      }
    }),
  );
}

/** `GET /api/admin/test/request-ledger?run=ID`: what arrived of that run, by second and step. */
export async function readLedger<E extends { Bindings: LedgerEnv }>(c: Context<E>): Promise<Response> {
  const runId = c.req.query("run") ?? "";
  if (!RUN_ID.test(runId)) return c.json({ error: "run: an edgeload run id" }, 400);
  await Promise.allSettled([...flushing]);
  await flush(c.env, runId);
  const rows = await ledgerOf(c.env, runId).rows();
  return c.json({ run: runId, total: rows.reduce((a, r) => a + r.count, 0), rows }, 200, { "cache-control": "no-store" });
}

/** One run's received requests, by run-relative second and step index. */
export class RequestLedger extends DurableObject<LedgerEnv> {
  constructor(ctx: DurableObjectState, env: LedgerEnv) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS received (second INTEGER, step INTEGER, count INTEGER, PRIMARY KEY (second, step))");
  }

  add(rows: ReadonlyArray<readonly [second: number, step: number, count: number]>): void {
    for (const [second, step, n] of rows) {
      this.ctx.storage.sql.exec(
        "INSERT INTO received (second, step, count) VALUES (?, ?, ?) ON CONFLICT (second, step) DO UPDATE SET count = count + excluded.count",
        second,
        step,
        n,
      );
    }
  }

  rows(): Array<{ second: number; step: number; count: number }> {
    return this.ctx.storage.sql
      .exec<{ second: number; step: number; count: number }>("SELECT second, step, count FROM received ORDER BY second, step")
      .toArray();
  }
}
