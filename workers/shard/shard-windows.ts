/**
 * A shard's open windows: which second a moment falls in, what each step measured in it
 * (and the series samples scraped then), and when each closes. A second's window closes
 * at this shard's own point of the next second (its close lag) and is handed out once,
 * oldest first, through a callback (LoadShard stores and flushes it).
 *
 * The engine keeps one per run slice; the coordinator keeps its own side of the same book
 * (coordinator/merge/open-windows.ts), with its own cut-off.
 */
import { WINDOW_MS, type SeriesPoint, type ShardAssignment, type ShardWindow } from "../../core/run/protocol.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { WindowBook } from "../../core/metrics/window-book.ts";
import { windowCloseLagMs } from "../../core/schedule/shard-assignment.ts";
import type { SeriesSample } from "../../scenarios/flow.ts";

export class ShardWindows {
  readonly #t0Ms: number;
  /** How far into the next second this shard closes a window (see #closableBefore). */
  readonly #closeLagMs: number;
  readonly #onWindow: (w: Omit<ShardWindow, "part">) => void;
  /** Open windows: stats by step, and scraped series samples flushed with them. */
  readonly #book = new WindowBook<{ readonly steps: MetricStats[]; series: SeriesPoint[] | null }>(() => ({ steps: [], series: null }));
  #closedThrough = 0; // windows below this number have been handed out

  /** `onWindow` receives each closed window that holds anything, oldest first. */
  constructor(a: Pick<ShardAssignment, "t0Ms" | "shard" | "slice">, onWindow: (w: Omit<ShardWindow, "part">) => void) {
    this.#t0Ms = a.t0Ms;
    this.#closeLagMs = windowCloseLagMs(a.shard.index, a.slice.shards);
    this.#onWindow = onWindow;
  }

  /** Windows below this number are complete and have been handed to the callback. */
  get closedThrough(): number {
    return this.#closedThrough;
  }

  /** The run-relative second `epochMs` falls in (0 before T0). */
  windowOf(epochMs: number): number {
    return Math.max(0, Math.floor((epochMs - this.#t0Ms) / WINDOW_MS));
  }

  /** The stats of `step` in window `windowS`, opened if need be. */
  statsFor(windowS: number, step: number): MetricStats {
    // A completion can only land in a closed window if the clock went backwards: fold it
    // into the oldest open one rather than lose it.
    const w = Math.max(windowS, this.#closedThrough);
    return (this.#book.at(w).steps[step] ??= new MetricStats());
  }

  /** Keeps scraped samples with the window of `atMs`, flushed with its metrics. */
  recordSamples(samples: readonly SeriesSample[], atMs: number): void {
    const w = Math.max(this.windowOf(atMs), this.#closedThrough);
    const window = this.#book.at(w);
    const points = (window.series ??= []);
    for (const s of samples) points.push({ name: s.name, labels: s.labels, tMs: atMs, value: s.value });
  }

  /** Hands out every window that may close at `nowMs`. */
  closeDue(nowMs: number): void {
    this.#closeBefore(this.#closableBefore(nowMs));
  }

  /** How long until the next window may close. */
  untilNextClose(nowMs: number): number {
    return this.#t0Ms + (this.#closableBefore(nowMs) + 1) * WINDOW_MS + this.#closeLagMs - nowMs;
  }

  /** Hands out every window still open, including the current one (end of the shard). */
  closeAll(): void {
    const last = Math.max(this.#closedThrough, this.#book.last) + 1;
    this.#closeBefore(last);
  }

  /**
   * Windows below this one may close at `nowMs`. Each shard closes a second's window at
   * its own offset into the next (windowCloseLagMs): closing, storing and
   * flushing at the same boundary in every shard of an isolate (every shard, locally)
   * stalled it, delaying the responses that arrived then.
   */
  #closableBefore(nowMs: number): number {
    return this.windowOf(nowMs - this.#closeLagMs);
  }

  #closeBefore(windowS: number): void {
    if (windowS <= this.#closedThrough) return;
    this.#closedThrough = windowS;
    for (const [w, { steps: perStep, series }] of this.#book.takeBelow(windowS)) {
      const steps: Array<readonly [number, ReturnType<MetricStats["toWire"]>]> = [];
      perStep.forEach((stats, i) => {
        if (stats && !stats.isEmpty) steps.push([i, stats.toWire()]);
      });
      if (steps.length || series) this.#onWindow({ windowS: w, steps, ...(series ? { series } : {}) });
    }
  }
}
