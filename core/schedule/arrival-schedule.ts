/**
 * The global open-model schedule: when the i-th iteration of a run is due.
 *
 * An arrival-rate profile is a list of stages whose rate moves linearly from `fromPerS`
 * to `toPerS` (k6's `constant-arrival-rate` is one flat stage; `ramping-arrival-rate` is
 * its `startRate` followed by its `stages`). The cumulative arrivals A(t) = ∫ rate is
 * piecewise quadratic, and iteration i is due at the t where A(t) = i: the first at t = 0,
 * like k6. The schedule is a pure function of the profile, so every shard computes the
 * same times without talking to the others.
 */

export interface RateStage {
  readonly durationMs: number;
  /** Iterations per second at the start of the stage. */
  readonly fromPerS: number;
  /** Iterations per second at the end of the stage. */
  readonly toPerS: number;
}

interface PreparedStage extends RateStage {
  readonly startMs: number;
  /** Cumulative arrivals before this stage. */
  readonly arrivalsBefore: number;
  readonly arrivals: number;
}

/** Guards floating-point sums such as 0.1 × 3 against being read as just below an integer. */
const EPSILON = 1e-9;

export class ArrivalSchedule {
  readonly stages: readonly PreparedStage[];
  /** Total iterations in the run. */
  readonly total: number;
  readonly durationMs: number;
  #stageCursor = 0;

  constructor(stages: readonly RateStage[]) {
    let startMs = 0;
    let arrivalsBefore = 0;
    const prepared: PreparedStage[] = [];
    for (const s of stages) {
      if (!(s.durationMs >= 0) || !(s.fromPerS >= 0) || !(s.toPerS >= 0)) {
        throw new RangeError(`invalid stage ${JSON.stringify(s)}`);
      }
      const arrivals = ((s.fromPerS + s.toPerS) / 2) * (s.durationMs / 1000);
      prepared.push({ ...s, startMs, arrivalsBefore, arrivals });
      startMs += s.durationMs;
      arrivalsBefore += arrivals;
    }
    this.stages = prepared;
    this.durationMs = startMs;
    this.total = Math.max(0, Math.ceil(arrivalsBefore - EPSILON));
  }

  /** Cumulative arrivals due by `tMs` (fractional). */
  arrivalsBy(tMs: number): number {
    for (const s of this.stages) {
      if (tMs < s.startMs + s.durationMs) {
        const tau = Math.max(0, tMs - s.startMs) / 1000;
        const d = s.durationMs / 1000;
        return s.arrivalsBefore + s.fromPerS * tau + ((s.toPerS - s.fromPerS) * tau * tau) / (2 * d);
      }
    }
    const last = this.stages[this.stages.length - 1];
    return last ? last.arrivalsBefore + last.arrivals : 0;
  }

  /**
   * Offset from T0 (ms, fractional) at which iteration `i` is due. Amortised O(1) when
   * called with increasing `i`, which is how shards walk it.
   */
  dueMs(i: number): number {
    const stages = this.stages;
    let k = this.#stageCursor;
    if (k >= stages.length || i < stages[k]!.arrivalsBefore - EPSILON) k = 0;
    while (k < stages.length - 1 && i >= stages[k]!.arrivalsBefore + stages[k]!.arrivals - EPSILON) k++;
    this.#stageCursor = k;
    const s = stages[k];
    if (!s) return 0;
    const x = Math.max(0, i - s.arrivalsBefore);
    const d = s.durationMs / 1000;
    const r0 = s.fromPerS;
    const a = d === 0 ? 0 : (s.toPerS - r0) / (2 * d);
    // Root of a·τ² + r0·τ − x = 0 in the cancellation-free form 2x / (r0 + √(r0² + 4ax)).
    const root = Math.sqrt(Math.max(0, r0 * r0 + 4 * a * x));
    const tauS = x === 0 ? 0 : (2 * x) / (r0 + root);
    return s.startMs + Math.min(tauS * 1000, s.durationMs);
  }
}
