/**
 * The live dashboard's points (core/run/live-view.ts LivePoint) of a run whose coordinator
 * holds nothing any more — its storage is deleted once the run is final and in D1 (issue
 * 49) — built from the run's stored rows (query.ts): per window its iterations, requests,
 * failures, drops, http_req_duration percentiles overall and per region, the mean requests
 * in flight, and the load its schedule asked for. What D1 does not keep per window is left
 * out: a k6 script's console lines, and the schedule lag (null: the chart leaves a gap).
 * A run past its retention has one point a minute (`resolutionS` 60).
 */
import { round3 } from "../metrics/rounding.ts";
import type { Histogram } from "../metrics/histogram.ts";
import type { LiveLatency, LivePoint, LiveRegionPoint } from "../run/live-view.ts";
import { targetLoadAt } from "../schedule/load-profile.ts";
import type { RunSpec } from "../spec/types.ts";
import { aggregateGroups, type QueryGroup, type QueryInput } from "./query.ts";

/** The points of a run's stored windows, oldest first. */
export function storedLivePoints(input: QueryInput, spec: RunSpec): LivePoint[] {
  const everyS = input.resolutionS ?? 1;
  const regions = new Map<number, Record<string, LiveRegionPoint>>();
  for (const g of aggregateGroups(input, { by: ["region"], everyS, trend: "duration" })) {
    const t = Number(g.key.t);
    const list = regions.get(t) ?? regions.set(t, {}).get(t)!;
    list[String(g.key.region)] = { requests: g.requests, failed: g.failed, ...latency(g.h) };
  }
  return aggregateGroups(input, { by: [], everyS, trend: "duration" }).map((g) => pointOf(g, everyS, spec, regions.get(Number(g.key.t)) ?? {}));
}

function pointOf(g: QueryGroup, everyS: number, spec: RunSpec, regions: Record<string, LiveRegionPoint>): LivePoint {
  const t = Number(g.key.t);
  // The load asked for in the window's middle, never past the schedule's end (as windowPoints reads it).
  const target = targetLoadAt(spec, Math.min((t + everyS / 2) * 1000, spec.durationMs - 1));
  return {
    t,
    targetRate: target.ratePerS,
    targetVUs: target.vus,
    iterations: g.iterations,
    requests: g.requests,
    failed: g.failed,
    dropped: g.dropped,
    lagP95: null,
    // Little's law over the window: the time its requests spent in flight over its length.
    inFlight: g.h.count ? round3((g.h.mean * g.h.count) / (everyS * 1_000_000)) : 0,
    ...latency(g.h),
    regions: Object.fromEntries(Object.entries(regions).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** Percentiles in milliseconds (the histogram is in µs), null without data. */
function latency(h: Histogram): LiveLatency {
  const ms = (q: number) => (h.count ? round3(h.quantile(q) / 1000) : null);
  return { p50: ms(0.5), p95: ms(0.95), p99: ms(0.99) };
}
