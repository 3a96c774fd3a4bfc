/**
 * Thresholds on k6's `vus` and `vus_max`, checked against the run's plan before any load.
 * The shards do not count their VUs, so edgeload reads the two gauges off the plan
 * (core/run/vu-gauges.ts), which fixes `vus` only at a constant level (one constant-vus or
 * iteration-count scenario). On a ramp or an arrival-rate scenario k6 samples `vus` once a
 * second and its last sample depends on timing: a threshold on it is refused, naming why,
 * rather than judged on a number edgeload would make up.
 *
 * @example vuThresholdProblems({ …a ramping-vus spec…, thresholds: { vus: ["value>0"] } }) // ["options.thresholds.vus: …"]
 */
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { vuGauges } from "../core/run/vu-gauges.ts";

const VU_GAUGES = ["vus", "vus_max"] as const;

/** Why the spec's thresholds on vus or vus_max cannot be judged: empty when they can, or name neither. */
export function vuThresholdProblems(spec: Readonly<Record<string, unknown>>): string[] {
  const thresholds = typeof spec.thresholds === "object" && spec.thresholds !== null ? spec.thresholds : {};
  const named = VU_GAUGES.filter((gauge) => Object.hasOwn(thresholds, gauge));
  if (!named.length) return [];
  const parsed = parseRunSpec(spec);
  // A spec that does not parse is refused with its own problems when it is submitted.
  if (!parsed.ok) return [];
  const fixed = vuGauges(parsed.spec);
  return named
    .filter((gauge) => fixed[gauge] === undefined)
    .map(
      (gauge) =>
        `options.thresholds.${gauge}: edgeload's shards do not count their VUs, so ${gauge} is read off the plan, which fixes it only at a constant VU level ` +
        "(one constant-vus, per-vu-iterations or shared-iterations scenario); on a ramp or an arrival-rate scenario k6's last once-a-second sample depends on timing",
    );
}
