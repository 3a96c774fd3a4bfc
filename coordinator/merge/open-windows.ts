/**
 * The windows a coordinator (or an aggregator) has merged but not yet taken out: per
 * window, one merged cell per (region, step) and the scraped series samples; and the
 * iterations of each window across shards, for the live achieved rate. Windows leave it
 * when no shard can still add to them (core/run/run-lifecycle.ts takeableBelow).
 */
import { COUNTERS, MetricStats } from "../../core/metrics/metric-stats.ts";
import type { RunTotals } from "../../core/run/run-totals.ts";
import { WindowBook } from "../../core/metrics/window-book.ts";
import type { ClosedCell, SeriesRow } from "../../core/run/window-cell.ts";
import type { LoggedWindow } from "./flush-log.ts";

interface OpenWindow {
  readonly cells: Map<string, { region: string; step: number; stats: MetricStats }>;
  readonly series: SeriesRow[];
}

/** A merged cell on its way to D1, with the step's index as well as its name. */

/** Windows taken for writing: their cells and series, and the newest window among them. */
export interface ClosedWindows {
  readonly cells: ClosedCell[];
  readonly series: SeriesRow[];
  readonly newestWindowS: number;
}

/** The achieved rate counts iterations (a five-request login is one), like the target rate. */
const ITERATIONS = COUNTERS.indexOf("iterations");

export class OpenWindows {
  readonly #book = new WindowBook<OpenWindow>(() => ({ cells: new Map(), series: [] }));
  readonly #iterationsByWindow = new Map<number, number>();

  /** Merges a shard's window; `totals` too when it is news (not a replay of the log). */
  merge(shard: number, region: string, window: LoggedWindow, totals: RunTotals | null): void {
    const { windowS, steps } = window;
    if (window.series?.length) {
      const rows = this.#book.at(windowS).series;
      for (const point of window.series) rows.push({ ...point, windowS, shard });
    }
    for (const [step, wire] of steps) {
      totals?.addWire(shard, region, step, wire);
      this.#cell(windowS, region, step).mergeWire(wire);
      this.#iterationsByWindow.set(windowS, (this.#iterationsByWindow.get(windowS) ?? 0) + (wire.c[ITERATIONS] ?? 0));
    }
  }

  /** Takes every window below `cutoff` out, oldest first; null when there is none. */
  takeBelow(cutoff: number, stepName: (step: number) => string): ClosedWindows | null {
    const ready = this.#book.takeBelow(cutoff);
    if (ready.length === 0) return null;
    const cells: ClosedCell[] = [];
    const series: SeriesRow[] = [];
    for (const [w, open] of ready) {
      for (const c of open.cells.values()) cells.push({ windowS: w, region: c.region, step: stepName(c.step), stepIndex: c.step, stats: c.stats });
      series.push(...open.series);
    }
    return { cells, series, newestWindowS: ready[ready.length - 1]![0] };
  }

  /** Iterations of a window across shards (0 when none arrived). */
  iterationsAt(windowS: number): number {
    return this.#iterationsByWindow.get(windowS) ?? 0;
  }

  /** Forgets the iteration counts of windows before `windowS`: the live rate reads recent ones only. */
  forgetIterationsBefore(windowS: number): void {
    for (const w of [...this.#iterationsByWindow.keys()]) if (w < windowS) this.#iterationsByWindow.delete(w);
  }

  #cell(windowS: number, region: string, step: number): MetricStats {
    const cells = this.#book.at(windowS).cells;
    const key = `${region}\u0000${step}`;
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = { region, step, stats: new MetricStats() }));
    return cell.stats;
  }
}
