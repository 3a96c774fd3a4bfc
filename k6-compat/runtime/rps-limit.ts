/**
 * k6's `options.rps` (and `--rps`): at most that many HTTP requests a second for the whole
 * test. k6 keeps one token bucket of that rate and burst 1, and each request waits on it once
 * it is built and before it is timed (k6 v1.8.1 internal/js/runner.go SetOptions,
 * lib/netext/httpext/request.go). WebSocket messages and browser calls do not wait, as in k6.
 *
 * Here a test runs on many shards, so each shard keeps a bucket of its part of the rate: rps
 * times its share of the test's load (its weight in its scenario's plan, times its scenario's
 * part of the test's peak VUs), the parts summing to rps. The shard's VUs run in one isolate
 * and share its bucket; a wait is the shard's sleep, so a run that stops cuts it.
 *
 * The decision is pure (`rpsSlot`, time passed in); `RpsLimiter` only holds the next free slot.
 *
 * @example
 * rpsSlot(1_000, 1_100, 200) // → { waitMs: 100, nextFreeMs: 1_300 }
 */

/** options.rps as k6 reads it: a whole number; absent, null, 0 or less: no limit (undefined). */
export function rpsOption(value: unknown, name = "options.rps"): number | undefined {
  if (value === undefined || value === null) return undefined;
  // k6 decodes rps into an integer (null.Int) and refuses anything else when the test starts.
  if (typeof value !== "number" || !Number.isInteger(value))
    throw new Error(`${name} must be a whole number of requests per second, got ${JSON.stringify(value)}`);
  return value > 0 ? value : undefined;
}

/**
 * One request's turn in a bucket of burst 1: it goes at `nextFreeMs`, or now when that has
 * passed (an idle bucket holds one token, never more), and the next goes `intervalMs` after it.
 * Never early: `nowMs + waitMs >= nextFreeMs`.
 */
export function rpsSlot(nowMs: number, nextFreeMs: number, intervalMs: number): { waitMs: number; nextFreeMs: number } {
  const at = Math.max(nowMs, nextFreeMs);
  return { waitMs: at - nowMs, nextFreeMs: at + intervalMs };
}

/** Where a shard stands in its test: its weight over its scenario plan's, and which scenario. */
export interface ShardLoadShare {
  /** The shard's index among the run's shards: one bucket per shard. */
  readonly index: number;
  /** Its weight over the sum of its scenario plan's weights (0, 1]. */
  readonly ofScenario: number;
}

/**
 * A shard's requests per second: rps × its share of its scenario × its scenario's share of the
 * test (`scenarioShare`). Uneven shards get uneven parts, in proportion.
 * @example shardRps(5, 0.25, 1) // 1.25
 */
export function shardRps(rps: number, ofScenario: number, ofTest: number): number {
  if (!(ofScenario > 0 && ofScenario <= 1)) throw new RangeError(`a shard's share of its scenario is in (0, 1], got ${ofScenario}`);
  return rps * ofScenario * ofTest;
}

/**
 * A scenario's share of the test's load, by peak VUs (exec.test.options' scenarios,
 * k6-compat/test-options.ts): its VUs over all scenarios'. Scenarios that do not overlap in
 * time each keep to their part, so the test stays under rps whatever their timing. One
 * scenario, or one not found in the options: 1.
 */
export function scenarioShare(testOptions: Readonly<Record<string, unknown>> | null | undefined, scenario: string): number {
  const scenarios = testOptions?.scenarios;
  if (typeof scenarios !== "object" || scenarios === null) return 1;
  const peaks = Object.entries(scenarios as Record<string, unknown>).map(([name, s]) => [name, peakVus(s)] as const);
  const own = peaks.find(([name]) => name === scenario)?.[1];
  const total = peaks.reduce((sum, [, vus]) => sum + vus, 0);
  return own === undefined || total <= 0 ? 1 : own / total;
}

/** The most VUs a k6 scenario config may have (k6's defaults: 1 VU; arrival rate: maxVUs, else preAllocatedVUs). */
function peakVus(config: unknown): number {
  const s = (typeof config === "object" && config !== null ? config : {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === "number" && v >= 0 ? v : undefined);
  const stages = Array.isArray(s.stages) ? s.stages.map((t) => n((t as { target?: unknown } | null)?.target) ?? 0) : [];
  switch (s.executor) {
    case "ramping-vus":
      return Math.max(n(s.startVUs) ?? 1, ...stages);
    case "constant-arrival-rate":
    case "ramping-arrival-rate":
      return Math.max(n(s.maxVUs) ?? 0, n(s.preAllocatedVUs) ?? 0);
    default:
      return n(s.vus) ?? 1;
  }
}

/** One shard's bucket: the requests of all its VUs take their turns from it. */
export class RpsLimiter {
  readonly #intervalMs: number;
  readonly #clock: () => number;
  #nextFreeMs = Number.NEGATIVE_INFINITY;

  /** `perSecond` > 0; `clock`: epoch ms (Date.now in the isolate, which moves on at each I/O). */
  constructor(perSecond: number, clock: () => number = Date.now) {
    if (!(perSecond > 0)) throw new RangeError(`requests per second must be above 0, got ${perSecond}`);
    this.#intervalMs = 1000 / perSecond;
    this.#clock = clock;
  }

  /** Takes the next turn: how long to wait (ms) before sending. The turn is kept even if the wait is cut. */
  reserve(): number {
    const slot = rpsSlot(this.#clock(), this.#nextFreeMs, this.#intervalMs);
    this.#nextFreeMs = slot.nextFreeMs;
    return slot.waitMs;
  }
}

/**
 * The bucket of the shard an iteration runs on, made at its first request of the run: each
 * shard's (`share`, from the shard) or, from a shard that says nothing of its share, one for
 * the isolate at the whole rate. Null when the test sets no rps.
 */
export function shardLimiter(
  limiters: Map<number, RpsLimiter>,
  rps: number | undefined,
  share: ShardLoadShare | undefined,
  ofTest: () => number,
): RpsLimiter | null {
  if (rps === undefined) return null;
  const key = share?.index ?? -1;
  let limiter = limiters.get(key);
  if (!limiter) limiters.set(key, (limiter = new RpsLimiter(share ? shardRps(rps, share.ofScenario, ofTest()) : rps)));
  return limiter;
}
