/**
 * Whether a run was held back, and by what: edgeload's own CPU or a slow target holding
 * its connection slots. Pure over a run's merged stats; the summary, the live shard
 * health and the CLI's verdict read it.
 */
import { formatMs } from "../metrics/clock-resolution.ts";
import type { MetricStats } from "../metrics/metric-stats.ts";

/**
 * What held the load back, when something did: `generator` — edgeload's own event loop
 * (client delay, timers firing late); `target` — slow responses holding every connection
 * slot or the in-flight cap, so requests waited to leave. The advice differs: the first
 * is edgeload's problem (fewer shards per isolate locally, more shards deployed), the
 * second the target's finding (its latency rose), which more connection slots only hide.
 */
export type SaturationCause = "generator" | "target";

export interface Saturation {
  readonly saturated: boolean;
  readonly reasons: readonly string[];
  /** Each cause found, once, in the order found. */
  readonly causes: readonly SaturationCause[];
}

/** Lag above this (p95, ms) means the generator could not keep the schedule. */
export const LAG_SATURATION_MS = 10;

/**
 * Whether the run was held back, and by what: iterations dropped for lack of in-flight
 * capacity, not sent by edgeload (lost to restarts, never started by a shard's deadline:
 * not-sent.ts), sent late (schedule lag), or timed late by a busy event loop (client
 * delay). Schedule lag made mostly of slot wait means the target's slow responses held the
 * connection slots; lag with little slot wait, or client delay, means the generator itself
 * fell behind. What edgeload did not send is never put down to the target.
 */
export function saturation(stats: MetricStats, resolutionMs: number | null = null): Saturation {
  // To the clock's step (clock-resolution.ts): "3.22s", not "3219.456 ms".
  const ms = (v: number) => formatMs(v, resolutionMs);
  const reasons: string[] = [];
  const causes = new Set<SaturationCause>();
  const c = stats.counters;
  const p95 = (h: { count: number; quantile(q: number): number }) => (h.count > 0 ? h.quantile(0.95) / 1000 : 0);
  const delayP95 = p95(stats.trends.clientDelay);
  const generatorBusy = delayP95 > LAG_SATURATION_MS;
  const durationP95 = p95(stats.trends.duration);
  // An arrival-rate shard counts what a restart or its deadline kept it from sending in
  // `dropped` too (k6's dropped_iterations); what is left was dropped at the cap. A VU
  // shard's restart losses are not in `dropped`, hence never below 0.
  const capDrops = Math.max(0, c.dropped - c.interrupted - c.unstarted);
  if (capDrops > 0) {
    if (generatorBusy) {
      causes.add("generator");
      reasons.push(
        `${capDrops} iterations dropped at the in-flight cap (maxVUs) while the generator's event loop was behind (client delay p95 ${ms(delayP95)})`,
      );
    } else {
      causes.add("target");
      reasons.push(
        `${capDrops} iterations dropped at the in-flight cap (maxVUs): responses took long enough (p95 ${ms(durationP95)}) to keep every slot of the cap busy — the target's latency, not edgeload's CPU; raise maxVUs to keep offering the load`,
      );
    }
  }
  const notSent = notSentLine(c.interrupted, c.unstarted);
  if (notSent) reasons.push(notSent);
  const lagP95 = p95(stats.trends.lag);
  if (lagP95 > LAG_SATURATION_MS) {
    const slotP95 = p95(stats.trends.slotWait);
    if (slotP95 >= lagP95 / 2) {
      causes.add("target");
      reasons.push(
        `schedule lag p95 ${ms(lagP95)}, mostly waiting for a connection slot (slot wait p95 ${ms(slotP95)}): slow responses (p95 ${ms(durationP95)}) held the slots — the target slowed; more shards or connection slots send more at once`,
      );
    } else {
      causes.add("generator");
      reasons.push(
        `schedule lag p95 ${ms(lagP95)} with slots free (slot wait p95 ${ms(slotP95)}): the shards' timers fired late — edgeload was short of CPU; locally fewer shards or a lower rate, deployed more shards`,
      );
    }
  }
  // The generator, not the target, made part of the tail: responses waited for its loop.
  if (generatorBusy) {
    causes.add("generator");
    reasons.push(
      `client delay p95 ${ms(delayP95)}: the generator's event loop held responses that long before timing them, and latencies include it (locally every shard shares one isolate: fewer shards or a lower rate help; deployed, more shards)`,
    );
  }
  return { saturated: reasons.length > 0, reasons, causes: [...causes] };
}

/** What edgeload itself did not send, by cause (not-sent.ts); null when it sent everything. */
function notSentLine(restarts: number, unstarted: number): string | null {
  if (restarts + unstarted === 0) return null;
  const causes = [
    restarts > 0 ? `${restarts} lost to shard restarts` : null,
    unstarted > 0 ? `${unstarted} never started before the shard's deadline (its first alarm came late or it fell behind)` : null,
  ].filter(Boolean);
  return `${restarts + unstarted} iterations not sent by edgeload: ${causes.join(", ")} — edgeload's own failure, not the target's`;
}
