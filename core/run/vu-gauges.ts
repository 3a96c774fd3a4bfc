/**
 * k6's `vus` and `vus_max` gauges ({value, min, max}) where a run's VU profile fixes them. k6
 * samples them once a second; edgeload's shards do not report VU counts, so they are read off
 * the plan: `vus_max` is the VUs the run initialises (every closed-model scenario's peak, an
 * arrival-rate one's preAllocatedVUs, summed as k6 initialises every scenario's VUs up front),
 * and `vus` is given only when it cannot move (one scenario at a constant level: constant-vus
 * and the iteration executors). A ramp's sampled values depend on timing, an externally-controlled
 * run's on its user: they are left out.
 */
import { VuSchedule } from "../schedule/vu-schedule.ts";
import type { RunSpec } from "../spec/types.ts";

export interface Gauge {
  readonly value: number;
  readonly min: number;
  readonly max: number;
}

const level = (n: number): Gauge => ({ value: n, min: n, max: n });

export function vuGauges(spec: RunSpec): { vus?: Gauge; vus_max?: Gauge } {
  const parts = spec.scenarios?.length ? spec.scenarios.map((s) => s.spec) : [spec];
  let initialised = 0;
  for (const part of parts) {
    if (part.vus) initialised += new VuSchedule(part.vus).peak;
    else if (part.preAllocatedVUs !== undefined) initialised += part.preAllocatedVUs;
    else return {};
  }
  const only = parts.length === 1 ? parts[0]!.vus : null;
  // An externally-controlled run's level is the user's, moved while it runs: its flat stages are its maxVUs.
  const constant = only && !only.externallyControlled ? only.stages.every((stage) => stage.target === only.startVUs) : false;
  return { ...(only && constant ? { vus: level(only.startVUs) } : {}), vus_max: level(initialised) };
}
