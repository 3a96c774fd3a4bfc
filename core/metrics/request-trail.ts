/**
 * A request, measured, before anything is recorded: the trail (k6's name for it). The
 * shard's sender fills one in around `fetch`; `recordTrail` turns it into the window's
 * counters and histograms. Measuring and recording are apart, as in k6, so the recording
 * rule is one pure function tested on its own, and the rule that decides whether a
 * response failed (`isExpectedStatus`) has one home, shared with setup/teardown steps and
 * custom steps.
 */
import type { MetricStats } from "./metric-stats.ts";

const US_PER_MS = 1000;

export interface RequestTrail {
  /** When the request started waiting for a connection slot (epoch ms). */
  readonly queuedMs: number;
  /** When it left. */
  readonly sendMs: number;
  /** Send → response headers. */
  readonly ttfbMs: number;
  /** When it completed: body read, or headers for a stream that opened. */
  readonly endMs: number;
  /** When the schedule meant it to leave; null in the closed model (no schedule). */
  readonly intendedMs: number | null;
  /** How long this isolate's event loop held the response before timing it (core/metrics/loop-delay.ts). */
  readonly clientDelayMs: number;
  /** The response's status; 0 with an error. */
  readonly status: number;
  readonly statusText: string;
  readonly bytes: number;
  readonly error: "timeout" | "connection" | null;
  /** What went wrong, for the summary's error samples: "timeout after 10000 ms", … */
  readonly errorMessage: string;
}

/** A response counts as a success when the step expects its status, or is 2xx/3xx without an expectation. */
export function isExpectedStatus(status: number, expect: ReadonlySet<number> | null | undefined): boolean {
  return expect ? expect.has(status) : status >= 200 && status < 400;
}

/**
 * Records a completed request into its completion window's stats: schedule lag and the
 * corrected latency when it had an intended time, slot wait and client delay always;
 * duration, TTFB and bytes for a response, the error class and message for a failure.
 * Returns whether it failed (http_req_failed), which its sub-metrics record too.
 */
export function recordTrail(stats: MetricStats, trail: RequestTrail, expect: ReadonlySet<number> | null | undefined): boolean {
  const c = stats.counters;
  const t = stats.trends;
  c.completed++;
  if (trail.intendedMs !== null) {
    t.lag.record((trail.sendMs - trail.intendedMs) * US_PER_MS);
    t.corrected.record((trail.endMs - trail.intendedMs) * US_PER_MS);
  }
  t.slotWait.record((trail.sendMs - trail.queuedMs) * US_PER_MS);
  t.clientDelay.record(trail.clientDelayMs * US_PER_MS);
  if (trail.error) {
    c.failed++;
    if (trail.error === "timeout") c.timeouts++;
    else c.connectionErrors++;
    stats.countStatus(trail.error);
    stats.countError(trail.errorMessage);
    return true;
  }
  t.duration.record((trail.endMs - trail.sendMs) * US_PER_MS);
  t.ttfb.record(trail.ttfbMs * US_PER_MS);
  c.bytesReceived += trail.bytes;
  stats.countStatus(trail.status);
  if (trail.status >= 500) c.status5xx++;
  else if (trail.status >= 400) c.status4xx++;
  if (!isExpectedStatus(trail.status, expect)) {
    c.failed++;
    stats.countError(`HTTP ${trail.status}${trail.statusText ? ` ${trail.statusText}` : ""}`);
    return true;
  }
  return false;
}
