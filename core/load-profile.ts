/**
 * The load a run's schedule asks for at a moment: arrivals per second (open model) and
 * active VUs (closed model), summed over named scenarios from their start times. The
 * coordinator shows it live next to what the shards achieve.
 */
import { ArrivalSchedule } from "./arrival-schedule.ts";
import type { RunSpec } from "./spec/types.ts";
import { VuSchedule } from "./vu-schedule.ts";

export interface TargetLoad {
  /** Arrivals per second the schedule asks for now; null when no part of the run is open-model. */
  readonly ratePerS: number | null;
  /** VUs the schedule has active now; null when no part of the run is closed-model. */
  readonly vus: number | null;
}

export function targetLoadAt(spec: RunSpec, elapsedMs: number): TargetLoad {
  const parts = spec.scenarios?.length ? spec.scenarios.map((s) => ({ spec: s.spec, at: elapsedMs - s.startMs })) : [{ spec, at: elapsedMs }];
  let ratePerS: number | null = null;
  let vus: number | null = null;
  for (const { spec: part, at } of parts) {
    if (part.vus) {
      const schedule = new VuSchedule(part.vus);
      vus = (vus ?? 0) + (at < 0 || at >= schedule.durationMs ? 0 : schedule.activeAt(at));
    } else {
      const schedule = new ArrivalSchedule(part.stages);
      const rate = at < 0 ? 0 : schedule.arrivalsBy(at + 500) - schedule.arrivalsBy(Math.max(0, at - 500));
      ratePerS = (ratePerS ?? 0) + rate;
    }
  }
  return { ratePerS: ratePerS === null ? null : Math.round(ratePerS * 100) / 100, vus };
}
