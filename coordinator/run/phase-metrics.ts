/**
 * What a k6 script's setup() and teardown() measure, counted in the run as k6 counts it: k6
 * sends every sample of setup() and teardown() to its metrics as it sends an iteration's
 * (k6 v1.8.1 internal/js/runner.go runPart: a VU of their own, the samples tagged with the
 * group `::setup` or `::teardown` and no scenario), so their requests are in http_reqs and
 * the request trends, their checks in `checks` — a failed check in setup() can fail a
 * `checks` threshold — and their custom metrics in the script's.
 *
 * The coordinator runs them outside any shard (script-phase.ts), so they are recorded here,
 * through the shard's own recording of an iteration's checks and metrics
 * (workers/shard/iteration-io.ts) and of a request's trail (core/metrics/request-trail.ts),
 * per step, and kept with the run record (`phaseStats`). The run's totals take them in
 * (addPhaseStats) under a shard index and a region of their own (PHASE_SHARD, PHASE_REGION):
 * in the whole run's figures, thresholds and summary, in no shard's row, and in none of the
 * per-second windows, whose `sent` the target's ledger reconciles (their requests carry no
 * run header: they are not the load).
 */
import { MetricStats, type MetricStatsWire } from "../../core/metrics/metric-stats.ts";
import { recordTrail, type RequestTrail } from "../../core/metrics/request-trail.ts";
import { recordRequestSubMetrics, type SubMetricFilter } from "../../core/metrics/sub-metrics.ts";
import { runSubMetricFilters } from "../../core/schedule/shard-assignment.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import type { Plan } from "../../core/plan/plan.ts";
import { reportersOf } from "../../core/plan/aggregation-tree.ts";
import type { FlowIO, FlowRequest, FlowResponse } from "../../scenarios/flow.ts";
import { IterationIO, type IterationHost as EngineSide } from "../../workers/shard/iteration-io.ts";

export type ScriptPhase = "setup" | "teardown";

/** One phase's stats, per step index. */
export type PhaseCells = ReadonlyArray<readonly [step: number, stats: MetricStatsWire]>;

/** What the run record keeps of its script's phases (RunRecord.phaseStats). */
export type PhaseStats = { readonly [phase in ScriptPhase]?: PhaseCells };

/** The totals' shard index of each phase's stats: below every real shard's. */
export const PHASE_SHARD: Readonly<Record<ScriptPhase, number>> = { setup: -1, teardown: -2 };

/** The region the summary shows them under: they left from the coordinator, not a shard's region. */
export const PHASE_REGION = "coordinator";

/** The sub-metrics a phase records: the same the run's shards record (runSubMetricFilters). */
export const phaseSubMetrics = (spec: RunSpec): SubMetricFilter[] => runSubMetricFilters(spec);

/**
 * Records a phase's requests, checks and metrics as the shard records an iteration's, over
 * `inner` (scenarios/run-phase.ts phaseIO), which sends each request once and keeps its
 * step result. Console lines are not its: `log` is left out, so they go to the coordinator's
 * log as before (workers/shard/script-flow.ts IterationHost.apply).
 */
export function phaseMetrics(inner: FlowIO, subMetrics: readonly SubMetricFilter[], timeoutMs: number): { readonly io: FlowIO; cells(): PhaseCells } {
  const byStep = new Map<number, MetricStats>();
  const statsNow = (step: number) => {
    let stats = byStep.get(step);
    if (!stats) byStep.set(step, (stats = new MetricStats()));
    return stats;
  };
  const engine: EngineSide = {
    now: () => inner.now(),
    mayStartRequest: () => true,
    async send(step, request) {
      const sendMs = inner.now();
      const response = await inner.send(step, request);
      const times = { sendMs, endMs: inner.now(), timeoutMs: request.timeoutMs ?? timeoutMs };
      recordPhaseRequest(statsNow(step), request, response, times, subMetrics);
      return response;
    },
    recordSamples: () => {},
    statsNow,
    subMetrics,
    think: (ms) => inner.sleep(ms),
    // exec.test.abort() in a phase ends the run through its outcome (phases.ts), not here.
    stop: () => {},
  };
  const recorder = new IterationIO(engine, null, Number.POSITIVE_INFINITY);
  const io: FlowIO = {
    send: (step, request) => recorder.send(step, request),
    check: (passed, tags) => recorder.check(passed, tags),
    count: (name, n, tags) => recorder.count(name, n, tags),
    rate: (name, passed, tags) => recorder.rate(name, passed, tags),
    trend: (name, ms, tags) => recorder.trend(name, ms, tags),
    gauge: (name, value) => recorder.gauge(name, value),
    sample: () => {},
    sleep: (ms) => recorder.sleep(ms),
    now: () => recorder.now(),
  };
  return { io, cells: () => [...byStep].filter(([, stats]) => !stats.isEmpty).map(([step, stats]) => [step, stats.toWire()] as const) };
}

/**
 * One request of a phase into its step's stats, as the shard records a request: each 3xx hop
 * it followed first, then its last response, each a request of its own as k6 counts them
 * (workers/shard/redirect-hops.ts does the same on a shard): counted sent, its trail recorded,
 * its sub-metrics, tagged with its own URL, method and status. A phase's send times a whole
 * response, so a hop's time to first byte is its duration.
 */
function recordPhaseRequest(
  stats: MetricStats,
  request: FlowRequest,
  response: FlowResponse,
  { sendMs, endMs, timeoutMs }: { readonly sendMs: number; readonly endMs: number; readonly timeoutMs: number },
  subMetrics: readonly SubMetricFilter[],
): void {
  let hopSendMs = sendMs;
  let target = { url: request.url, method: request.method };
  for (const hop of response.redirects ?? []) {
    const round = { status: hop.status, error: null, durationMs: hop.durationMs, bytes: hop.bytes };
    recordPhaseRound(stats, request, target, round, { sendMs: hopSendMs, endMs: hopSendMs + hop.durationMs, timeoutMs }, subMetrics);
    hopSendMs += hop.durationMs;
    target = hop.to;
  }
  const round = { status: response.status, error: response.error, durationMs: response.durationMs, bytes: response.body?.length ?? 0 };
  recordPhaseRound(stats, request, target, round, { sendMs: hopSendMs, endMs, timeoutMs }, subMetrics);
}

/** One round trip of a phase's request: to `target`, with what came back. */
function recordPhaseRound(
  stats: MetricStats,
  request: FlowRequest,
  target: { readonly url: string; readonly method: string },
  round: { readonly status: number; readonly error: FlowResponse["error"]; readonly durationMs: number; readonly bytes: number },
  { sendMs, endMs, timeoutMs }: { readonly sendMs: number; readonly endMs: number; readonly timeoutMs: number },
  subMetrics: readonly SubMetricFilter[],
): void {
  const trail: RequestTrail = {
    queuedMs: sendMs,
    sendMs,
    ttfbMs: round.durationMs,
    endMs: round.error ? endMs : sendMs + round.durationMs,
    intendedMs: null,
    clientDelayMs: 0,
    status: round.status,
    statusText: "",
    bytes: round.bytes,
    error: round.error,
    errorMessage: round.error === "timeout" ? `timeout after ${timeoutMs} ms` : "connection error",
  };
  stats.counters.sent++;
  const failed = recordTrail(stats, trail, request.expect);
  const tags = { name: target.url, url: target.url, method: target.method, ...request.tags };
  recordRequestSubMetrics(() => stats.custom, subMetrics, tags, trail, failed);
}

/**
 * Adds the run's phase stats to its totals, each phase once: a phase whose shard index
 * already holds stats is in them (taken in before, or restored from a checkpoint that had
 * it), so calling this after every change of the record, and after a restart, counts each
 * once. Returns `totals`.
 */
export function addPhaseStats(totals: RunTotals, phaseStats: PhaseStats | undefined): RunTotals {
  for (const phase of ["setup", "teardown"] as const) {
    const cells = phaseStats?.[phase];
    if (!cells?.length || !totals.shard(PHASE_SHARD[phase]).isEmpty) continue;
    for (const [step, wire] of cells) totals.addWire(PHASE_SHARD[phase], PHASE_REGION, step, wire);
  }
  return totals;
}

/** The run's stats without its phases': what its shards (or region roots) measured of the load. */
export function loadStats(totals: RunTotals, plan: Plan): MetricStats {
  const stats = new MetricStats();
  for (const reporter of reportersOf(plan)) stats.merge(totals.shard(reporter.index));
  return stats;
}
