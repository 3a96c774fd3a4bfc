/**
 * A shard's part in `POST /v1/probe` (issue 49; coordinator/http/probe-api.ts): from the
 * region the shard is placed in, time a few sequential requests to the target, as `edgeload
 * plan --probe` does from the machine it runs on (core/plan/latency-probe.ts says what is
 * sent and how it reads). Each request goes through the shard's outbound policy, so only an
 * allowed target is reached; the shard stores nothing, so the probe leaves nothing behind.
 *
 * Timing: from the send to the response headers, on the Workers clock, which moves on I/O;
 * the body is read to the end so the next request reuses the connection.
 */
import type { OutboundFetch } from "../../core/outbound/outbound-request.ts";
import { type ProbeFigures, type ProbeRequest, timeSequentialRequests } from "../../core/plan/latency-probe.ts";

export interface ShardProbe {
  /** The colo the shard ran in ("local" under wrangler dev). */
  readonly colo: string;
  /** Its timings, or why it has none (the target refused or did not answer enough). */
  readonly figures: ProbeFigures | null;
  readonly error: string | null;
}

export interface ProbeClock {
  now(): number;
}

/** Times `requests` requests of `request` with `fetcher` within `budgetMs` (see the header); never throws. */
export async function probeFromHere(
  fetcher: OutboundFetch,
  clock: ProbeClock,
  request: ProbeRequest,
  requests: number,
  budgetMs: number,
): Promise<Omit<ShardProbe, "colo">> {
  const timed = await timeSequentialRequests(fetcher, () => clock.now(), request, requests, budgetMs);
  if (timed.figures) return { figures: timed.figures, error: null };
  return {
    figures: null,
    error: `${request.method} ${request.url} answered ${timed.answered} of ${requests} requests${timed.lastError ? `: ${timed.lastError}` : ""}`,
  };
}
