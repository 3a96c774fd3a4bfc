/**
 * What a latency probe sends and how its timings read (issue 49), shared by `edgeload plan
 * --probe` from the machine the command runs on (cli/plan-probe.ts) and by a deployment's
 * `POST /v1/probe`, which times the same requests from one shard in each region of the run
 * (coordinator/http/probe-api.ts, workers/shard/latency-probe.ts). Pure.
 *
 * A request is timed from its send to its response headers, as a shard's connection slot is
 * held (core/plan/plan.ts); the first one opens the connection and is not counted, as a
 * shard's warm-up HEAD is not. The probe sends the spec's first plain GET or HEAD step (no
 * SSE, no template in its path) without its headers (a spec's secrets stay in it), else GET
 * of the target's origin.
 */
import type { RunSpec } from "../spec/types.ts";

/** Requests a probe times (after the one that opens the connection). */
export const PROBE_REQUESTS = 20;
/** The most a probe may take; it reports what it measured by then, at least PROBE_MIN_REQUESTS. */
export const PROBE_BUDGET_MS = 15_000;
export const PROBE_MIN_REQUESTS = 5;

export interface ProbeRequest {
  readonly url: string;
  readonly method: "GET" | "HEAD";
}

/** The timings of a probe, ms to first byte. */
export interface ProbeFigures {
  /** Requests timed. */
  readonly requests: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly maxMs: number;
  /** Status codes answered, with their counts: a refused request (401) may answer faster than a real one. */
  readonly statuses: Readonly<Record<string, number>>;
}

/** One region's answer to a deployment's probe: its shard's colo and figures, or why it has none. */
export interface RegionProbe {
  readonly region: string;
  readonly colo: string | null;
  readonly figures: ProbeFigures | null;
  readonly error: string | null;
}

/** What `POST /v1/probe` answers (coordinator/http/probe-api.ts). */
export interface DeploymentProbe {
  readonly request: { readonly url: string; readonly method: "GET" | "HEAD" };
  readonly regions: readonly RegionProbe[];
  readonly p95Ms: number | null;
}

/** What the probe sends: the spec's first plain GET or HEAD step, else GET of the target's origin. */
export function probeRequestOf(spec: Pick<RunSpec, "target" | "steps">): ProbeRequest {
  const step = spec.steps.find((s) => (s.method === "GET" || s.method === "HEAD") && !s.sse && !s.path.includes("{{"));
  if (step) return { url: new URL(step.path, spec.target).href, method: step.method as "GET" | "HEAD" };
  return { url: `${new URL(spec.target).origin}/`, method: "GET" };
}

/** The `q` quantile of `sorted` (ascending) by nearest rank: the ⌈q·n⌉-th smallest. */
export function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

/** The figures of `samplesMs` (each request's time to first byte), rounded to 0.1 ms. */
export function probeFigures(samplesMs: readonly number[], statuses: Readonly<Record<string, number>>): ProbeFigures {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const ms = (n: number) => Math.round(n * 10) / 10;
  return { requests: sorted.length, p50Ms: ms(nearestRank(sorted, 0.5)), p95Ms: ms(nearestRank(sorted, 0.95)), maxMs: ms(sorted.at(-1) ?? 0), statuses };
}

/** What a probe may send with: a fetch (the CLI's, or a shard's through its outbound policy). */
export type ProbeFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface TimedRequests {
  /** The timings; null when fewer than PROBE_MIN_REQUESTS (or all asked, if fewer) were answered. */
  readonly figures: ProbeFigures | null;
  readonly answered: number;
  /** The last failure's message, if any. */
  readonly lastError: string | null;
}

/**
 * Times `requests` sequential requests of `request` within `budgetMs`, from the send to the
 * response headers on `now`'s clock; never throws. The first opens the connection (DNS, TCP,
 * TLS) and is not timed; each body is read to the end so the next request reuses the
 * connection, as a shard's do. One loop for the CLI's probe and a shard's (cli/plan-probe.ts,
 * workers/shard/latency-probe.ts).
 */
export async function timeSequentialRequests(
  fetcher: ProbeFetch,
  now: () => number,
  request: ProbeRequest,
  requests: number,
  budgetMs: number,
): Promise<TimedRequests> {
  const deadline = now() + budgetMs;
  const samples: number[] = [];
  const statuses: Record<string, number> = {};
  let lastError: string | null = null;
  for (let i = 0; i <= requests && now() < deadline; i++) {
    const started = now();
    try {
      const response = await fetcher(request.url, {
        method: request.method,
        redirect: "manual",
        headers: { "user-agent": "edgeload-plan-probe" },
        signal: AbortSignal.timeout(Math.max(1, Math.floor(deadline - started))),
      });
      const ttfbMs = now() - started;
      await response.arrayBuffer();
      if (i === 0) continue;
      samples.push(ttfbMs);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
  }
  const enough = samples.length >= Math.min(PROBE_MIN_REQUESTS, requests);
  return { figures: enough ? probeFigures(samples, statuses) : null, answered: samples.length, lastError };
}
