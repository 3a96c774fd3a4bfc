/**
 * The load a run's schedule asks for at a moment: arrivals per second (open model) and
 * active VUs (closed model), summed over named scenarios from their start times. The
 * coordinator shows it live next to what the shards achieve.
 */
import { ArrivalSchedule } from "./arrival-schedule.ts";
import type { RunSpec } from "../spec/types.ts";
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
      ratePerS = (ratePerS ?? 0) + scheduledRate(new ArrivalSchedule(part.stages), at);
    }
  }
  return { ratePerS: ratePerS === null ? null : Math.round(ratePerS * 100) / 100, vus };
}

/** Half the span a rate is averaged over, either side of the moment asked for. */
const HALF_SPAN_MS = 500;

/**
 * Arrivals per second the schedule asks for around `atMs`: averaged over the second centred
 * on it, so a ramp reads smoothly, but over only the part of that second inside the schedule.
 * A flat 40/s then reads 40 in its first and last half-seconds too, not the 20 that counting
 * the time outside the run as part of the second gave. 0 outside the schedule, as for VUs.
 */
function scheduledRate(schedule: ArrivalSchedule, atMs: number): number {
  if (atMs < 0 || atMs >= schedule.durationMs) return 0;
  const from = Math.max(0, atMs - HALF_SPAN_MS);
  const to = Math.min(schedule.durationMs, atMs + HALF_SPAN_MS);
  return ((schedule.arrivalsBy(to) - schedule.arrivalsBy(from)) * 1000) / (to - from);
}
