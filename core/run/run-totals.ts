/**
 * Whole-run measurements as the coordinator accumulates them: one MetricStats per
 * (region, step) and one per shard. Every other grouping (global, per region, per step,
 * per colo, tag-filtered thresholds) is an exact merge of these.
 */
import { MetricStats, type MetricStatsWire } from "../metrics/metric-stats.ts";

export interface RunTotalsWire {
  readonly cells: ReadonlyArray<readonly [region: string, step: number, stats: MetricStatsWire]>;
  readonly shards: ReadonlyArray<readonly [shard: number, stats: MetricStatsWire]>;
}

export class RunTotals {
  readonly #cells = new Map<string, { region: string; step: number; stats: MetricStats }>();
  readonly #shards = new Map<number, MetricStats>();

  add(shard: number, region: string, step: number, stats: MetricStats): void {
    this.#cell(region, step).merge(stats);
    this.#shard(shard).merge(stats);
  }

  /** Same as add(), straight from the wire form without building a temporary MetricStats. */
  addWire(shard: number, region: string, step: number, wire: MetricStatsWire): void {
    this.#cell(region, step).mergeWire(wire);
    this.#shard(shard).mergeWire(wire);
  }

  #cell(region: string, step: number): MetricStats {
    const key = `${region}\u0000${step}`;
    let cell = this.#cells.get(key);
    if (!cell) this.#cells.set(key, (cell = { region, step, stats: new MetricStats() }));
    return cell.stats;
  }

  #shard(index: number): MetricStats {
    let s = this.#shards.get(index);
    if (!s) this.#shards.set(index, (s = new MetricStats()));
    return s;
  }

  /** Merged stats of the cells matching the filter (all cells without one). */
  select(filter: { region?: string; step?: number; steps?: ReadonlySet<number> } = {}): MetricStats {
    const out = new MetricStats();
    for (const c of this.#cells.values()) {
      if (filter.region !== undefined && c.region !== filter.region) continue;
      if (filter.step !== undefined && c.step !== filter.step) continue;
      if (filter.steps !== undefined && !filter.steps.has(c.step)) continue;
      out.merge(c.stats);
    }
    return out;
  }

  regions(): string[] {
    return [...new Set([...this.#cells.values()].map((c) => c.region))].sort();
  }

  steps(): number[] {
    return [...new Set([...this.#cells.values()].map((c) => c.step))].sort((a, b) => a - b);
  }

  shard(index: number): MetricStats {
    return this.#shards.get(index) ?? new MetricStats();
  }

  /** The wire form without the per-shard stats, for readers that group by region and step only. */
  cellsWire(): RunTotalsWire {
    return { cells: [...this.#cells.values()].map((c) => [c.region, c.step, c.stats.toWire()] as const), shards: [] };
  }

  toWire(): RunTotalsWire {
    return {
      cells: [...this.#cells.values()].map((c) => [c.region, c.step, c.stats.toWire()] as const),
      shards: [...this.#shards.entries()].map(([i, s]) => [i, s.toWire()] as const),
    };
  }

  static fromWire(wire: RunTotalsWire): RunTotals {
    const t = new RunTotals();
    for (const [region, step, stats] of wire.cells) {
      t.#cells.set(`${region}\u0000${step}`, { region, step, stats: MetricStats.fromWire(stats) });
    }
    for (const [shard, stats] of wire.shards) t.#shards.set(shard, MetricStats.fromWire(stats));
    return t;
  }
}
