/**
 * What one iteration's flow sees of the engine (scenarios/flow.ts's FlowIO): sending a
 * request of its step, checks, custom metrics, think time. Checks and custom metrics are
 * recorded under the step of the last request sent, in the window of the moment they are
 * recorded.
 */
import type { MetricStats } from "../../core/metrics/metric-stats.ts";
import type { LogLevel } from "../../core/metrics/script-output.ts";
import { recordSubSample, type SampleTags, type SubMetricFilter } from "../../core/metrics/sub-metrics.ts";
import { ITERATION_DURATION } from "../../core/metrics/aggregate.ts";
import { redactUrlsIn } from "../../core/spec/redact-url.ts";
import {
  IterationCouldNotRun,
  IterationInterrupted,
  type Flow,
  type FlowIO,
  type FlowRequest,
  type FlowResponse,
  type IterationInfo,
  type SeriesSample,
} from "../../scenarios/flow.ts";

const US_PER_MS = 1000;

/** The engine's side of an iteration (ShardEngine implements it). */
export interface IterationHost {
  now(): number;
  mayStartRequest(hardStopMs: number): boolean;
  send(stepIndex: number, request: FlowRequest, intendedMs: number | null, holdUntilMs: number): Promise<FlowResponse>;
  recordSamples(samples: readonly SeriesSample[], atMs: number): void;
  statsNow(stepIndex: number): MetricStats;
  /** The run's k6 sub-metrics (core/metrics/sub-metrics.ts); empty without tag-filtered thresholds. */
  readonly subMetrics: readonly SubMetricFilter[];
  think(ms: number, hardStopMs: number): Promise<void>;
  /** Stops the shard's sending (a k6 script's exec.test.abort()). */
  stop(): void;
}

export class IterationIO implements FlowIO {
  readonly #engine: IterationHost;
  readonly #intendedMs: number | null;
  readonly #hardStopMs: number;
  step = 0;
  requests = 0;
  #checkFailed = false;

  /** Whether it is past the iteration's hard stop: it was interrupted then (k6 cuts what is in flight). */
  pastHardStop(): boolean {
    return this.#engine.now() > this.#hardStopMs;
  }

  constructor(engine: IterationHost, intendedMs: number | null, hardStopMs: number) {
    this.#engine = engine;
    this.#intendedMs = intendedMs;
    this.#hardStopMs = hardStopMs;
  }

  send(step: number, request: FlowRequest): Promise<FlowResponse> {
    if (!this.#engine.mayStartRequest(this.#hardStopMs)) return Promise.reject(new IterationInterrupted("past the iteration's stop time"));
    // Only the first request answers to the schedule; later ones start when asked.
    const intended = this.#intendedMs === null ? null : this.requests === 0 ? this.#intendedMs : this.#engine.now();
    this.step = step;
    this.requests++;
    this.#checkFailed = false;
    return this.#engine.send(step, request, intended, this.#hardStopMs);
  }

  sample(samples: readonly SeriesSample[]): void {
    this.#engine.recordSamples(samples, this.#engine.now());
  }

  check(passed: boolean, tags?: SampleTags): void {
    const stats = this.#engine.statsNow(this.step);
    const c = stats.counters;
    if (tags) recordSubSample(() => stats.custom, this.#engine.subMetrics, "checks", tags, passed);
    // k6's root_group: each check by its group and name.
    if (tags?.check !== undefined) stats.checkResults.record(tags.group ?? "", tags.check, passed);
    if (passed) {
      c.checksPassed++;
      return;
    }
    c.checksFailed++;
    if (!this.#checkFailed) c.checkFailedRequests++;
    this.#checkFailed = true;
  }

  count(name: string, n = 1, tags?: SampleTags): void {
    this.#custom(name, n, tags).count(name, n);
  }

  rate(name: string, passed: boolean, tags?: SampleTags): void {
    this.#custom(name, passed, tags).rate(name, passed);
  }

  trend(name: string, ms: number, tags?: SampleTags): void {
    this.#custom(name, ms, tags).trend(name, ms * US_PER_MS);
  }

  gauge(name: string, value: number): void {
    this.#engine.statsNow(this.step).custom.gauge(name, value, this.#engine.now());
  }

  /** The window's custom metrics, after recording the sample into the sub-metrics its tags match. */
  #custom(name: string, value: number | boolean, tags: SampleTags | undefined) {
    const stats = this.#engine.statsNow(this.step);
    if (tags) recordSubSample(() => stats.custom, this.#engine.subMetrics, name, tags, value);
    return stats.custom;
  }

  sleep(ms: number): Promise<void> {
    return this.#engine.think(ms, this.#hardStopMs);
  }

  now(): number {
    return this.#engine.now();
  }

  log(level: LogLevel, message: string, vu: number): void {
    this.#engine.statsNow(this.step).script.log(level, message, vu);
  }

  scriptError(message: string, at: string | null): void {
    this.#engine.statsNow(this.step).script.error(message, at);
  }

  /** Records the abort in this window, which carries it to the coordinator, and stops this shard at once. */
  abortTest(message: string): void {
    this.#engine.statsNow(this.step).script.abort(message);
    this.#engine.stop();
  }

  /** Records exec.test.fail() in this window, which carries it to the coordinator; the shard goes on. */
  failTest(message: string): void {
    this.#engine.statsNow(this.step).script.markFailed(message);
  }
}

/**
 * Runs one iteration's flow through `io` and counts it, under its last step in the window
 * it ended in. A flow that sent nothing (e.g. every refresh family busy) did not run: it is
 * dropped, unless the flow may be empty. One cut short (ramp-down, past the graceful stop, an
 * abort) is not counted at all, as in k6. One whose script isolate could not run it is a
 * script error, not an iteration. A flow bug must not stop the shard: it shows as a failed
 * check on the last step.
 */
export async function runIteration(flow: Flow, io: IterationIO, it: IterationInfo, host: IterationHost): Promise<void> {
  const startMs = host.now();
  try {
    await flow.run(io, it);
  } catch (error) {
    if (error instanceof IterationInterrupted) return;
    // Not an iteration, and not the target's failure: a script error the summary shows.
    if (error instanceof IterationCouldNotRun) {
      io.scriptError(error.message, null);
      return;
    }
    // Logs are kept outside the run: a URL the error quotes keeps no credentials.
    console.error(`flow error in iteration ${it.global}: ${redactUrlsIn(error instanceof Error ? (error.stack ?? error.message) : String(error))}`);
    io.check(false);
  }
  // Its last request was in flight at its hard stop: k6 would have interrupted it.
  if (io.pastHardStop()) return;
  const counters = host.statsNow(io.step).counters;
  if (io.requests === 0 && !flow.iterationsMayBeEmpty) counters.dropped++;
  else {
    counters.iterations++;
    // k6's iteration_duration: the whole iteration, think time included.
    if (flow.timesIterations) host.statsNow(io.step).custom.trend(ITERATION_DURATION, (host.now() - startMs) * US_PER_MS);
  }
  if (flow.minIterationMs !== undefined) await waitOutMinimum(flow.minIterationMs - (host.now() - startMs), io);
}

/**
 * k6's minIterationDuration: after a whole iteration shorter than it, the VU waits out the
 * rest before its next (a VU of an arrival-rate scenario stays busy meanwhile), the wait in
 * neither iteration_duration nor the iteration's window; the iteration's hard stop or the
 * run's end cuts it (k6 v1.x internal/js/runner.go RunOnce).
 */
async function waitOutMinimum(remainingMs: number, io: IterationIO): Promise<void> {
  if (remainingMs <= 0) return;
  try {
    await io.sleep(remainingMs);
  } catch (error) {
    if (!(error instanceof IterationInterrupted)) throw error;
  }
}
