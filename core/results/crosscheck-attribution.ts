/**
 * Whose a crosscheck's latency residual is: edgeload's, or the runtime's it sends from.
 *
 * edgeload sends from workerd, k6 from Go. Part of what separates them is workerd's own
 * fetch path, which any generator running there pays: a bare paced fetch loop in a Durable
 * Object (the "floor", workers/fetch-floor), sent at the same rate against the same
 * target, reads it. A disagreeing latency row is the runtime's when the floor itself would
 * disagree with k6 there and edgeload reads within the row's tolerance of the floor.
 * Otherwise what edgeload reads over the floor is its own.
 *
 * @example
 *   attributeResiduals(check, { p50: 22, p90: 23, p95: 24, p99: 49, max: null })
 *   // → [{ metric: "p99", residualMs: 7.5, runtimeMs: 23.6, edgeloadMs: -16.1, owner: "runtime" }]
 */
import type { Crosscheck, Latency } from "./crosscheck.ts";

export interface ResidualAttribution {
  readonly metric: keyof Latency;
  /** edgeload − k6, ms. */
  readonly residualMs: number;
  /** floor − k6: what workerd's own paced loop reads over k6, ms. */
  readonly runtimeMs: number;
  /** edgeload − floor, ms. */
  readonly edgeloadMs: number;
  /** "runtime" when the floor itself disagrees with k6 and edgeload reads within the row's tolerance of it. */
  readonly owner: "runtime" | "edgeload";
}

/** Each disagreeing whole-load latency row the floor also measured, attributed. */
export function attributeResiduals(check: Crosscheck, floor: Latency): ResidualAttribution[] {
  const out: ResidualAttribution[] = [];
  for (const row of check.rows) {
    if (row.step !== null || row.unit !== "ms" || row.verdict !== "disagree") continue;
    const metric = row.metric as keyof Latency;
    const floorMs = floor[metric];
    if (floorMs === null || row.edge === null || row.k6 === null || row.tolerance === null) continue;
    const edgeloadMs = row.edge - floorMs;
    const runtimeMs = floorMs - row.k6;
    // The runtime's only where the floor itself would disagree, and edgeload reads no further from it than the row allows.
    const floorDisagrees = Math.abs(runtimeMs) > row.tolerance + 1e-9;
    out.push({
      metric,
      residualMs: row.edge - row.k6,
      runtimeMs,
      edgeloadMs,
      owner: floorDisagrees && edgeloadMs <= row.tolerance + 1e-9 ? "runtime" : "edgeload",
    });
  }
  return out;
}

/** A difference in ms to one decimal, signed: "+7.5", "-0.3", "+0.0" (never "-0.0"). */
export function signedMs(ms: number): string {
  const tenths = Math.round(ms * 10) / 10 || 0;
  return `${tenths >= 0 ? "+" : ""}${tenths.toFixed(1)}`;
}

/** One line per attribution: "p99 +7.5 ms: the runtime's (workerd's own paced loop reads +23.6 ms over k6 at this rate)". */
export function renderAttributions(attributions: readonly ResidualAttribution[]): string[] {
  return attributions.map((a) =>
    a.owner === "runtime"
      ? `${a.metric} ${signedMs(a.residualMs)} ms: the runtime's (workerd's own paced loop reads ${signedMs(a.runtimeMs)} ms over k6 at this rate)`
      : `${a.metric} ${signedMs(a.residualMs)} ms: ${signedMs(a.edgeloadMs)} ms of it edgeload's own, over workerd's paced loop (which reads ${signedMs(a.runtimeMs)} ms over k6)`,
  );
}
