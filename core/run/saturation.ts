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
 * capacity, lost to restarts, sent late (schedule lag), or timed late by a busy event
 * loop (client delay). Schedule lag made mostly of slot wait means the target's slow
 * responses held the connection slots; lag with little slot wait, or client delay, means
 * the generator itself fell behind.
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
  if (c.dropped > 0) {
    if (generatorBusy) {
      causes.add("generator");
      reasons.push(
        `${c.dropped} iterations dropped at the in-flight cap (maxVUs) while the generator's event loop was behind (client delay p95 ${ms(delayP95)})`,
      );
    } else {
      causes.add("target");
      reasons.push(
        `${c.dropped} iterations dropped at the in-flight cap (maxVUs): responses took long enough (p95 ${ms(durationP95)}) to keep every slot of the cap busy — the target's latency, not edgeload's CPU; raise maxVUs to keep offering the load`,
      );
    }
  }
  if (c.interrupted > 0) reasons.push(`${c.interrupted} iterations lost to shard restarts`);
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
