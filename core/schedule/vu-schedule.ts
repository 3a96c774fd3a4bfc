/**
 * The closed-model schedule: how many virtual users are active at each moment of a run.
 *
 * k6's `constant-vus` is one flat stage of `vus`; `ramping-vus` starts at `startVUs` and
 * moves linearly towards each stage's `target`. As in k6, the count moves one VU at a
 * time at evenly spaced moments: over a stage from `from` to `to` lasting d, the count
 * is `from ± floor(|to − from| · τ / d)` at τ into the stage (floored towards `from`), and
 * exactly `to` at the stage's end. A zero-length stage jumps at once.
 *
 * VUs are numbered from 0; at any moment the active ones are 0 … n(t)−1, so a ramp-down
 * stops the most recently started VUs first (as k6 does). A shard owns VU j when its
 * index holds position j in `interleaveCycle(weights)` (core/data/interleave.ts), so each
 * shard derives its VUs from its slice of the weights alone (shard-slice.ts) and the shards' counts sum to n(t) at every
 * t. Pure: no clock inside, times are offsets from T0 in milliseconds.
 *
 * @example
 * const s = new VuSchedule({ startVUs: 0, stages: [{ target: 10, durationMs: 10_000 }], gracefulRampDownMs: 30_000 });
 * s.activeAt(5_000) // → 5
 */
import type { ShardSlice } from "./shard-slice.ts";

export interface VuStage {
  readonly target: number;
  readonly durationMs: number;
}

export interface VuProfile {
  readonly startVUs: number;
  readonly stages: readonly VuStage[];
  /** How long a VU that the ramp-down stops may take to finish its iteration (k6 default 30 s). */
  readonly gracefulRampDownMs: number;
  /**
   * Iteration-count executors: each VU runs `count` iterations (per-vu-iterations), or the
   * VUs share `count` between them (shared-iterations); the stages then only bound the time
   * (k6's maxDuration). Absent for the time-based executors.
   */
  readonly iterations?: { readonly kind: "per-vu" | "shared"; readonly count: number };
  /**
   * k6's externally-controlled: the stages hold maxVUs for the whole duration (what the
   * plan sizes and prices, since the run may be scaled there), and the VUs active are the
   * run's control level instead (core/run/vu-control.ts), `startVUs` until it is first
   * changed. Absent for the other executors.
   */
  readonly externallyControlled?: { readonly startVUs: number };
}

/** Guards step times like d·i/n, computed in floating point, against landing just before step i. */
const EPSILON = 1e-9;

interface PreparedStage extends VuStage {
  readonly from: number;
  readonly startMs: number;
}

export class VuSchedule {
  readonly profile: VuProfile;
  readonly durationMs: number;
  /** The most VUs active at once. */
  readonly peak: number;
  readonly #stages: readonly PreparedStage[];

  constructor(profile: VuProfile) {
    let from = profile.startVUs;
    let startMs = 0;
    const stages: PreparedStage[] = [];
    for (const s of profile.stages) {
      if (!(s.durationMs >= 0) || !(Number.isInteger(s.target) && s.target >= 0)) throw new RangeError(`invalid stage ${JSON.stringify(s)}`);
      stages.push({ ...s, from, startMs });
      from = s.target;
      startMs += s.durationMs;
    }
    this.profile = profile;
    this.#stages = stages;
    this.durationMs = startMs;
    this.peak = Math.max(profile.startVUs, ...profile.stages.map((s) => s.target));
  }

  /** VUs active at `tMs` after T0; 0 once the run is over. */
  activeAt(tMs: number): number {
    if (tMs < 0) return 0;
    for (const s of this.#stages) {
      if (tMs < s.startMs + s.durationMs) {
        const diff = s.target - s.from;
        const steps = Math.floor((Math.abs(diff) * (tMs - s.startMs)) / s.durationMs + EPSILON);
        return s.from + Math.sign(diff) * steps;
      }
    }
    return 0;
  }

  /**
   * The next moment after `tMs` at which the count may change (a VU step or a stage
   * boundary); Infinity after the end. Waking there is enough to follow the schedule.
   */
  nextChangeAfter(tMs: number): number {
    for (const s of this.#stages) {
      const endMs = s.startMs + s.durationMs;
      if (tMs >= endMs) continue;
      const n = Math.abs(s.target - s.from);
      if (tMs < s.startMs) return s.startMs;
      if (n === 0) return endMs;
      const i = Math.floor((n * (tMs - s.startMs)) / s.durationMs + EPSILON) + 1;
      return i >= n ? endMs : s.startMs + (s.durationMs * i) / n;
    }
    return Infinity;
  }

  /**
   * The first moment at or after `tMs` at which VU `vu` is no longer active (the run's
   * end at the latest).
   */
  stopsAt(vu: number, tMs: number): number {
    let t = tMs;
    while (t < this.durationMs && this.activeAt(t) > vu) t = this.nextChangeAfter(t);
    return Math.min(t, this.durationMs);
  }

  /** ∫ n(t) dt over the run, in VU-seconds (for estimates of the total requests). */
  vuSeconds(): number {
    let total = 0;
    for (const s of this.#stages) {
      const n = Math.abs(s.target - s.from);
      // n equal steps of d/n each, at from, from ± 1, …, from ± (n − 1).
      const mean = n === 0 ? s.from : s.from + (Math.sign(s.target - s.from) * (n - 1)) / 2;
      total += (mean * s.durationMs) / 1000;
    }
    return total;
  }
}

/**
 * The VUs one shard owns: global VU j belongs to the shard at position j mod W of
 * `interleaveCycle(weights)`. Over any prefix of VUs the shards' counts sum to the prefix.
 */
export class ShardVus {
  /** The cycle positions this shard owns (its slice's slots). */
  readonly #own: ReadonlySet<number>;
  readonly #cycle: number;

  constructor(slice: ShardSlice) {
    if (!(slice.cycle > 0)) throw new RangeError(`a plan's cycle must be positive, got ${slice.cycle}`);
    this.#own = new Set(slice.slots);
    this.#cycle = slice.cycle;
  }

  owns(vu: number): boolean {
    return this.#own.has(vu % this.#cycle);
  }

  /** The global numbers of this shard's VUs among the first `active`, ascending. */
  owned(active: number): number[] {
    const out: number[] = [];
    for (let j = 0; j < active; j++) if (this.owns(j)) out.push(j);
    return out;
  }

  /**
   * This shard's part of `iterations` shared by `vus` VUs: iteration i goes to VU i mod
   * vus, so the shards' parts sum to the whole and follow how many VUs each owns (as k6's
   * execution segments split shared iterations between instances).
   */
  sharedIterations(iterations: number, vus: number): number {
    if (vus <= 0) return 0;
    let own = 0;
    for (let v = 0; v < vus; v++) if (this.owns(v)) own += Math.floor(iterations / vus) + (v < iterations % vus ? 1 : 0);
    return own;
  }
}
