/**
 * `edgeload plan --probe`: the target's time to first byte, measured with a few sequential
 * requests from where the command runs, so the plan is sized for the latency the target
 * really has rather than the spec's guess (issue 49: a shard sustains connectionSlots /
 * latency requests a second, so a slower target needs more shards and costs more).
 *
 * It measures from this machine, not from the shards' regions: a deployment cannot probe yet
 * (no route does), and `plan` says so beside the figure. A request is timed from its send to
 * its response headers, as a shard's connection slot is held (core/plan/plan.ts); a first
 * request opens the connection and is not counted, as a shard's warm-up HEAD is not. The
 * probe sends the first plain GET or HEAD step of the spec (no SSE, no template in its path)
 * without its headers (a spec's secrets stay in it), else GET of the target's origin; it is
 * bounded in time and in requests.
 */
import { atLatency } from "../core/plan/latency-costs.ts";
import type { RunSpec } from "../core/spec/types.ts";
import { CliError, EXIT } from "./connection.ts";

/** Requests the probe times (after the one that opens the connection). */
export const PROBE_REQUESTS = 20;
/** The most the whole probe may take; it plans with what it measured by then, at least PROBE_MIN_REQUESTS. */
export const PROBE_BUDGET_MS = 15_000;
export const PROBE_MIN_REQUESTS = 5;

export interface LatencyProbe {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  /** Requests timed. */
  readonly requests: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly maxMs: number;
  /** Status codes answered, with their counts: a refused request (401) may answer faster than a real one. */
  readonly statuses: Readonly<Record<string, number>>;
  readonly from: "this machine";
}

export interface ProbeOptions {
  readonly requests?: number;
  readonly budgetMs?: number;
  readonly fetcher?: typeof fetch;
}

/** What the probe sends: the spec's first plain GET or HEAD step, else GET of the target's origin. */
export function probeRequestOf(spec: Pick<RunSpec, "target" | "steps">): { url: string; method: "GET" | "HEAD" } {
  const step = spec.steps.find((s) => (s.method === "GET" || s.method === "HEAD") && !s.sse && !s.path.includes("{{"));
  if (step) return { url: new URL(step.path, spec.target).href, method: step.method as "GET" | "HEAD" };
  return { url: `${new URL(spec.target).origin}/`, method: "GET" };
}

/** The `q` quantile of `sorted` (ascending) by nearest rank: the ⌈q·n⌉-th smallest. */
export function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

/** Times `requests` sequential requests to `url` (see the header); throws a CliError naming the target when it cannot. */
export async function probeLatency(url: string, method: "GET" | "HEAD", options: ProbeOptions = {}): Promise<LatencyProbe> {
  const fetcher = options.fetcher ?? fetch;
  const wanted = options.requests ?? PROBE_REQUESTS;
  const deadline = performance.now() + (options.budgetMs ?? PROBE_BUDGET_MS);
  const samples: number[] = [];
  const statuses: Record<string, number> = {};
  let lastError: unknown = null;
  // The first opens the connection (DNS, TCP, TLS) and is not timed; then `wanted` timed ones.
  for (let i = 0; i <= wanted && performance.now() < deadline; i++) {
    const started = performance.now();
    try {
      const response = await fetcher(url, {
        method,
        redirect: "manual",
        headers: { "user-agent": "edgeload-plan-probe" },
        signal: AbortSignal.timeout(Math.max(1, Math.floor(deadline - started))),
      });
      const ttfbMs = performance.now() - started;
      // Read to the end, so the next request reuses the connection as a shard's does.
      await response.arrayBuffer();
      if (i === 0) continue;
      samples.push(ttfbMs);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    } catch (error) {
      lastError = error;
    }
  }
  if (samples.length < Math.min(PROBE_MIN_REQUESTS, wanted)) {
    const why = lastError ? `: ${(lastError as Error).message}` : ` within ${Math.round((options.budgetMs ?? PROBE_BUDGET_MS) / 1000)} s`;
    throw new CliError(`--probe: ${method} ${url} answered ${samples.length} of ${wanted} requests${why}`, EXIT.invalidConfig);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const ms = (n: number) => Math.round(n * 10) / 10;
  return {
    url,
    method,
    requests: samples.length,
    p50Ms: ms(nearestRank(sorted, 0.5)),
    p95Ms: ms(nearestRank(sorted, 0.95)),
    maxMs: ms(sorted.at(-1) ?? 0),
    statuses,
    from: "this machine",
  };
}

/** The probe in a line, e.g. "measured p95 82.4 ms (p50 81.0, max 90.2) over 20 GET of http://…/delay?ms=80 from this machine". */
export function probeLine(p: LatencyProbe, deployment: boolean): string {
  const statuses = Object.entries(p.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(", ");
  const where = deployment ? "from this machine, not from the deployment's regions (a deployment cannot probe yet)" : "from this machine";
  return `latency probe: p95 ${p.p95Ms} ms to first byte (p50 ${p.p50Ms}, max ${p.maxMs}) over ${p.requests} ${p.method} of ${p.url} ${where}; answered ${statuses}`;
}

/** The latency a plan is sized for, where it came from, and the probe when one measured it. */
export interface PlannedLatency {
  /** The spec with that latency as its expectedLatency (core/plan/latency-costs.ts atLatency). */
  readonly spec: RunSpec;
  readonly view: {
    readonly plannedMs: number;
    readonly source: "probe" | "spec" | "default";
    readonly specMs: number;
    readonly probe: LatencyProbe | null;
  };
  /** Where the latency came from, as the plan's latency table says it. */
  readonly basis: string;
  /** The probe's figures as a line of the plan's text (probeLine); absent without a probe. */
  readonly probeText?: string;
}

/**
 * The spec's own expectedLatency (`raw` says whether it set one), or with `probe` the p95 the
 * probe measured: a probe is sent only to a target the named deployment allows (`refused`
 * false), and `deployment` says it was measured from here, not from there.
 */
export async function plannedLatency(
  spec: RunSpec,
  raw: unknown,
  flags: { readonly probe: boolean; readonly refused: boolean; readonly deployment: boolean },
  options: ProbeOptions = {},
): Promise<PlannedLatency> {
  const setBySpec = typeof raw === "object" && raw !== null && "expectedLatency" in raw;
  const source = setBySpec ? "spec" : "default";
  const basis = setBySpec ? "the spec's expectedLatency" : `expectedLatency's default (the spec sets none)`;
  const own = { spec, view: { plannedMs: spec.expectedLatencyMs, source, specMs: spec.expectedLatencyMs, probe: null }, basis } as const;
  if (!flags.probe) return own;
  if (flags.refused) return { ...own, probeText: "latency probe: not sent: the deployment would refuse the target" };
  const { url, method } = probeRequestOf(spec);
  const probe = await probeLatency(url, method, options);
  const plannedMs = Math.max(1, Math.ceil(probe.p95Ms));
  return {
    spec: atLatency(spec, plannedMs),
    view: { plannedMs, source: "probe", specMs: spec.expectedLatencyMs, probe },
    basis: `the probe's p95, the spec says ${spec.expectedLatencyMs} ms`,
    probeText: probeLine(probe, flags.deployment),
  };
}
