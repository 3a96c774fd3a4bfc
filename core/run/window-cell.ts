/**
 * The window model both sides of a run's merge speak: a closed window's merged stats for
 * one region and step (a cell), and a scraped series sample with the window and sender it
 * came from. The coordinator's open windows produce them, the live feed shows them and the
 * D1 store writes them (coordinator/store/results-store.ts); none of those owns the shape.
 */
import type { MetricStats } from "../metrics/metric-stats.ts";
import type { SeriesPoint } from "./protocol.ts";

/** One window's merged stats for one region and step, as shown and as stored. */
export interface WindowCell {
  readonly windowS: number;
  readonly region: string;
  readonly step: string;
  readonly stats: MetricStats;
}

/** A cell with its step's index in the run (the live view reads steps by index). */
export type ClosedCell = WindowCell & { readonly stepIndex: number };

/** A scraped sample as stored: with the window and the shard it came from. */
export interface SeriesRow extends SeriesPoint {
  readonly windowS: number;
  readonly shard: number;
}
