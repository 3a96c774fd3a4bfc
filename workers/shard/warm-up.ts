/**
 * A shard's warm-up: what it does before t0 so that no request of the run pays for a cold
 * start. A shard that woke at t0 read its colo, its seed set or script bundle and built its
 * flow while its first iterations fell due, and sent them on a connection it had yet to
 * open: second 0 read a p95 twice the steady seconds'. Now its first alarm comes
 * WARM_UP_LEAD_MS before t0; it does all of that then, sends one warm-up request to the
 * target's origin (opening the connection; not counted in any metric, and stored apart),
 * and waits for t0 in the same invocation.
 */
import type { OutboundFetch } from "../../core/outbound/outbound-request.ts";
import { WARM_UP_LEAD_MS } from "../../core/schedule/shard-assignment.ts";
import type { EngineClock } from "./engine-types.ts";

/** The warm-up request: a HEAD of the target's origin, answered or not within this. */
const WARM_UP_TIMEOUT_MS = 2_000;

/** What the warm-up request met, for inspect() and the tests: it is in no metric. */
export interface WarmUp {
  /** The origin it was sent to. */
  readonly url: string;
  /** When it was sent (epoch ms): before t0. */
  readonly sentAtMs: number;
  /** The response's status; 0 when there was none. */
  readonly status: number;
  readonly durationMs: number;
  /** Why there was no response (a timeout, a refused connection), if there was none. */
  readonly error?: string;
}

/** When a shard given its assignment at `nowMs` first wakes: WARM_UP_LEAD_MS before t0, or now if that has passed. */
export function firstAlarmAtMs(t0Ms: number, nowMs: number): number {
  return Math.max(nowMs, t0Ms - WARM_UP_LEAD_MS);
}

/**
 * Whether an invocation at `nowMs` should warm up: only before t0 and only once. One that
 * wakes at or after t0 (a late alarm, a restart) starts at once, since anything it did
 * first would delay iterations already due.
 */
export function shouldWarmUp(t0Ms: number, nowMs: number, warmedUp: boolean): boolean {
  return !warmedUp && nowMs < t0Ms;
}

/**
 * Sends the warm-up request: HEAD of `target`'s origin, redirects not followed (the
 * connection is what it is for; any answer will do). A run without a target of its own
 * (a k6 script names its URLs in code) sends none: null.
 */
export async function sendWarmUp(fetcher: OutboundFetch, target: string | undefined, clock: Pick<EngineClock, "now">): Promise<WarmUp | null> {
  if (!target) return null;
  const url = `${new URL(target).origin}/`;
  const started = clock.now();
  try {
    const response = await fetcher(url, { method: "HEAD", redirect: "manual", signal: AbortSignal.timeout(WARM_UP_TIMEOUT_MS) });
    await response.body?.cancel();
    return { url, sentAtMs: started, status: response.status, durationMs: clock.now() - started };
  } catch (error) {
    const timeout = (error as { name?: string } | null)?.name === "TimeoutError";
    return {
      url,
      sentAtMs: started,
      status: 0,
      durationMs: clock.now() - started,
      error: timeout ? `no answer within ${WARM_UP_TIMEOUT_MS} ms` : String(error),
    };
  }
}
