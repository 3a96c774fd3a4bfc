/**
 * `edgeload plan --probe`: the target's time to first byte, measured with a few sequential
 * requests, so the plan is sized for the latency the target really has rather than the spec's
 * guess (issue 49: a shard sustains connectionSlots / latency requests a second, so a slower
 * target needs more shards and costs more).
 *
 * With a deployment named (`--url`), its `POST /v1/probe` times the target from each region the
 * run uses, through one shard a region, and the plan takes the slowest region's p95; a
 * deployment without the route (404) is probed from here instead, and `plan` says so. Without
 * one, the requests go from the machine the command runs on. What is sent and how it reads:
 * core/plan/latency-probe.ts; it is bounded in time and in requests.
 */
import { atLatency } from "../core/plan/latency-costs.ts";
import {
  PROBE_BUDGET_MS,
  PROBE_REQUESTS,
  probeRequestOf,
  type ProbeFigures,
  type DeploymentProbe,
  type RegionProbe,
  timeSequentialRequests,
} from "../core/plan/latency-probe.ts";
import type { RunSpec } from "../core/spec/types.ts";
import { CliError, EXIT } from "./connection.ts";

export interface LatencyProbe extends ProbeFigures {
  readonly url: string;
  readonly method: "GET" | "HEAD";
  readonly from: "this machine" | "the deployment's regions";
  /** Each region's shard's figures, when the deployment probed (its p95 above is the slowest region's). */
  readonly regions?: readonly RegionProbe[];
}

export interface ProbeOptions {
  readonly requests?: number;
  readonly budgetMs?: number;
  readonly fetcher?: typeof fetch;
  /** The named deployment's POST /v1/probe; null from it: the deployment has no such route. */
  readonly deployment?: () => Promise<DeploymentProbe | null>;
}

/** Times `requests` sequential requests to `url` (see the header); throws a CliError naming the target when it cannot. */
export async function probeLatency(url: string, method: "GET" | "HEAD", options: ProbeOptions = {}): Promise<LatencyProbe> {
  const wanted = options.requests ?? PROBE_REQUESTS;
  const budgetMs = options.budgetMs ?? PROBE_BUDGET_MS;
  const timed = await timeSequentialRequests(options.fetcher ?? fetch, () => performance.now(), { url, method }, wanted, budgetMs);
  if (!timed.figures) {
    const why = timed.lastError ? `: ${timed.lastError}` : ` within ${Math.round(budgetMs / 1000)} s`;
    throw new CliError(`--probe: ${method} ${url} answered ${timed.answered} of ${wanted} requests${why}`, EXIT.invalidConfig);
  }
  return { url, method, ...timed.figures, from: "this machine" };
}

/** The deployment's answer as a probe: the slowest region's figures, every region's beside them; a CliError when no region timed the target. */
export function deploymentLatency(answer: DeploymentProbe): LatencyProbe {
  const timed = answer.regions.filter((r): r is RegionProbe & { figures: ProbeFigures } => r.figures !== null);
  const slowest = timed.reduce<(typeof timed)[number] | null>((a, b) => (a === null || b.figures.p95Ms > a.figures.p95Ms ? b : a), null);
  if (!slowest) {
    const why = answer.regions.map((r) => `${r.region}: ${r.error ?? "no answer"}`).join("; ");
    throw new CliError(`--probe: no region of the deployment timed ${answer.request.method} ${answer.request.url} (${why})`, EXIT.invalidConfig);
  }
  return { ...answer.request, ...slowest.figures, from: "the deployment's regions", regions: answer.regions };
}

/** The probe in a line, e.g. "measured p95 82.4 ms (p50 81.0, max 90.2) over 20 GET of http://…/delay?ms=80 from this machine". */
export function probeLine(p: LatencyProbe, deployment: boolean): string {
  const statuses = Object.entries(p.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(", ");
  if (p.regions) {
    const each = p.regions.map((r) => (r.figures ? `${r.region} ${r.figures.p95Ms} ms (${r.colo})` : `${r.region} none: ${r.error}`)).join(", ");
    return `latency probe: p95 ${p.p95Ms} ms to first byte, the slowest of ${p.regions.length} regions, ${p.requests} ${p.method} of ${p.url} from one shard in each: ${each}; answered ${statuses}`;
  }
  const where = deployment ? "from this machine, not from the deployment's regions (the deployment has no POST /v1/probe)" : "from this machine";
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
  const fromDeployment = flags.deployment && options.deployment ? await options.deployment() : null;
  const { url, method } = probeRequestOf(spec);
  const probe = fromDeployment ? deploymentLatency(fromDeployment) : await probeLatency(url, method, options);
  const plannedMs = Math.max(1, Math.ceil(probe.p95Ms));
  return {
    spec: atLatency(spec, plannedMs),
    view: { plannedMs, source: "probe", specMs: spec.expectedLatencyMs, probe },
    basis: `the probe's p95${fromDeployment ? " (the slowest region)" : ""}, the spec says ${spec.expectedLatencyMs} ms`,
    probeText: probeLine(probe, flags.deployment),
  };
}
