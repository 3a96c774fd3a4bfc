/**
 * The chaos schedule's "R2 throwing" (scripts/bench/chaos/schedule.ts): reads of the seed
 * set fail with an error, as an R2 outage fails them, rather than find the object missing
 * (r2-missing). The shards run in this isolate (the objects of the test Worker) and read
 * the seed set through their R2 binding (workers/shard/shard-flow.ts), an object of the same
 * class as this module's env.SEEDS: so the class's `get` is wrapped once, and the wrapper
 * throws for a key while a fault holds it. Admission checks the seed set with `head`, which
 * is left alone: the fault can hold from before the run is created, so it meets the shards'
 * first loads whatever the timing.
 */
import { env } from "cloudflare:workers";

type Get = (this: R2Bucket, key: string, ...rest: unknown[]) => Promise<R2ObjectBody | null>;

/** Keys whose reads throw, until when (epoch ms), and how many reads each threw. */
const failing = new Map<string, { untilMs: number; thrown: number }>();
let wrapped = false;

function wrapReads(): void {
  if (wrapped) return;
  wrapped = true;
  const proto = Object.getPrototypeOf(env.SEEDS) as { get: Get };
  const original = proto.get;
  proto.get = function (this: R2Bucket, key: string, ...rest: unknown[]) {
    const fault = failing.get(key);
    if (fault && Date.now() < fault.untilMs) {
      fault.thrown++;
      return Promise.reject(new Error(`chaos: R2 failed reading ${key}`));
    }
    return original.call(this, key, ...rest);
  };
}

/** Reads of `key` throw from now on, until throwSeedReads sets when they stop. */
export function failSeedReads(key: string): void {
  wrapReads();
  failing.set(key, { untilMs: Number.POSITIVE_INFINITY, thrown: 0 });
}

/**
 * Reads of `key` throw until `untilMs`, then succeed again. Throws when no read came while
 * they failed (unless `loadsDue` is false: no shard of the run started): the fault met no
 * load, and the schedule was not played as drawn.
 */
export async function throwSeedReads(key: string, untilMs: number, loadsDue: boolean): Promise<void> {
  const fault = failing.get(key);
  if (!fault) throw new Error(`r2-throwing: reads of ${key} were not failing`);
  fault.untilMs = untilMs;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, untilMs - Date.now())));
  failing.delete(key);
  if (loadsDue && fault.thrown === 0) throw new Error(`r2-throwing: no read of ${key} came while it threw`);
}

/** Reads of `key` succeed again (a run whose schedule failed half-way may have left them failing). */
export function restoreSeedReads(key: string): void {
  failing.delete(key);
}
