/**
 * What one object of the scale simulation (scale-simulation.ts) was asked to do, and how
 * long its own work took: requests by virtual second (a flush, a tick), and its synchronous
 * work timed with performance.now(). The simulation runs every object in one process, so
 * a garbage-collector pause of that process (its heap holds thousands of shards) can land
 * in any object's timed work; cpu() takes the process's GC pauses out, leaving the
 * object's own work. What it cannot take out is time the operating system gave another
 * process mid-section (performance.now() is wall time; the thread's CPU clock ticks too
 * coarsely here, 0 or ~0.3 ms, for sections of a tenth of a millisecond): on a busy
 * machine single sections run long, so medians are the figures to read, maxima an upper bound.
 */

export type ObjectKind = "coordinator" | "aggregator";
export type WorkKind = "intake" | "tick" | "other";
/** A span of real time, [start, end) in performance.now() ms. */
export type Span = readonly [startMs: number, endMs: number];

interface Section {
  readonly spans: readonly Span[];
  readonly second: number;
  readonly as: WorkKind;
  /** What the work was over (windows taken in), for a time per unit. */
  readonly units: number;
}

/** An object's CPU, GC pauses taken out. */
export interface ObjectCpu {
  readonly msBySecond: ReadonlyMap<number, number>;
  /** Each tick's work. */
  readonly tickMs: readonly number[];
  /** Taking in flushes, all of it. */
  readonly intakeMs: number;
  /** Each flush's intake over the windows it brought (flushes that brought some). */
  readonly intakeMsPerUnit: readonly number[];
}

export class ObjectMeter {
  readonly kind: ObjectKind;
  readonly name: string;
  readonly requestsBySecond = new Map<number, number>();
  /** The virtual second the first final flush (done) arrived in; null while none has. */
  firstDoneSecond: number | null = null;
  /** Windows its flushes brought in (duplicates not counted). */
  windowsTaken = 0;
  readonly #secondOf: () => number;
  readonly #sections: Section[] = [];

  /** `secondOf`: the current virtual second of the run. */
  constructor(kind: ObjectKind, name: string, secondOf: () => number) {
    this.kind = kind;
    this.name = name;
    this.#secondOf = secondOf;
  }

  /** A request into the object; `done`: a sender's final flush. */
  request(done = false): void {
    const s = this.#secondOf();
    this.requestsBySecond.set(s, (this.requestsBySecond.get(s) ?? 0) + 1);
    if (done) this.firstDoneSecond ??= s;
  }

  /** Runs `work` (synchronous) and books its time to the current virtual second; `units`: what it was over. */
  timed<T>(work: () => T, as: WorkKind = "other", units: (result: T) => number = () => 0): T {
    const start = performance.now();
    const result = work();
    this.book([[start, performance.now()]], as, units(result));
    return result;
  }

  /** Books work timed in pieces (around an await) as one section. */
  book(spans: readonly Span[], as: WorkKind = "other", units = 0): void {
    this.#sections.push({ spans, second: this.#secondOf(), as, units });
  }

  /** Its CPU, without `pauses` (the process's GC pauses, in time order). */
  cpu(pauses: readonly Span[]): ObjectCpu {
    const msBySecond = new Map<number, number>();
    const tickMs: number[] = [];
    const intakeMsPerUnit: number[] = [];
    let intakeMs = 0;
    for (const { spans, second, as, units } of this.#sections) {
      const ms = spans.reduce((n, [start, end]) => n + end - start - overlap(start, end, pauses), 0);
      msBySecond.set(second, (msBySecond.get(second) ?? 0) + ms);
      if (as === "tick") tickMs.push(ms);
      if (as !== "intake") continue;
      intakeMs += ms;
      if (units > 0) intakeMsPerUnit.push(ms / units);
    }
    return { msBySecond, tickMs, intakeMs, intakeMsPerUnit };
  }
}

/** How much of [start, end) the pauses (sorted, not overlapping) cover. */
function overlap(start: number, end: number, pauses: readonly Span[]): number {
  // The first pause ending after `start`.
  let lo = 0;
  let hi = pauses.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pauses[mid]![1] <= start) lo = mid + 1;
    else hi = mid;
  }
  let covered = 0;
  for (let i = lo; i < pauses.length && pauses[i]![0] < end; i++) covered += Math.min(end, pauses[i]![1]) - Math.max(start, pauses[i]![0]);
  return covered;
}
