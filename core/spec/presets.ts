/**
 * Presets: the load ladders and thresholds of the reference suite (presets/authrim.json,
 * shared with the k6 scripts), turned into a ramping-arrival-rate profile.
 *
 * `rpsN` names a rung of a scenario's ladder. A preset ramps 0 → N, holds N, ramps N → 0
 * (15 s / 180 s / 15 s; rps100 10 s / 60 s / 10 s). `durationScale` shortens every stage
 * for smoke runs (each stays at least one second).
 *
 * @example
 * expandPreset("introspect", "rps300", 0.1)
 * // → { stages: [{target: 300, duration: "1500ms"}, {target: 300, duration: "18000ms"}, …], thresholds: {…} }
 */
import presets from "../../presets/authrim.json" with { type: "json" };
import { parseDurationMs } from "./duration.ts";

export interface PresetExpansion {
  readonly executor: "ramping-arrival-rate";
  readonly startRate: 0;
  readonly stages: ReadonlyArray<{ target: number; duration: string }>;
  readonly thresholds: Readonly<Record<string, readonly string[]>>;
  readonly ratePerS: number;
}

interface ScenarioPresets {
  readonly rates: readonly number[];
  readonly cloudRates: readonly number[];
  readonly thresholds: Readonly<Record<string, readonly string[]>>;
}

const BY_SCENARIO = presets.scenarios as Readonly<Record<string, ScenarioPresets>>;

/** The preset names available for a scenario, e.g. ["rps100", "rps300", …]. */
export function presetNames(scenario: string): string[] {
  const p = BY_SCENARIO[scenario];
  return p ? [...p.rates, ...p.cloudRates].map((r) => `rps${r}`) : [];
}

/** The preset's thresholds alone (for runs that set their own load profile). */
export function presetThresholds(scenario: string): Readonly<Record<string, readonly string[]>> {
  return BY_SCENARIO[scenario]?.thresholds ?? {};
}

/**
 * The preset's thresholds on what the provider must answer right, not how fast: its
 * thresholds on the scenario's own counters and rates (false positives, accepted revoked
 * tokens, rotation success, …), leaving latency and HTTP failure rates to the preset.
 */
export function correctnessThresholds(
  scenario: string,
  customMetrics: Readonly<Record<string, "counter" | "rate" | "trend">>,
): Readonly<Record<string, readonly string[]>> {
  return Object.fromEntries(
    Object.entries(presetThresholds(scenario)).filter(([metric]) => {
      const kind = customMetrics[metric.replace(/\{.*$/, "")];
      return kind === "counter" || kind === "rate";
    }),
  );
}

export function expandPreset(scenario: string, preset: string, durationScale = 1): { ok: true; value: PresetExpansion } | { ok: false; error: string } {
  const p = BY_SCENARIO[scenario];
  if (!p) return { ok: false, error: `no presets for scenario "${scenario}"; presets exist for ${Object.keys(BY_SCENARIO).join(", ")}` };
  const rate = /^rps(\d+)$/.exec(preset)?.[1];
  if (!rate || !presetNames(scenario).includes(preset)) {
    return { ok: false, error: `unknown preset "${preset}" for ${scenario}; use one of ${presetNames(scenario).join(", ")}` };
  }
  if (!(durationScale > 0 && durationScale <= 10)) return { ok: false, error: `durationScale ${durationScale} must be in (0, 10]` };
  const n = Number(rate);
  const shape = presets.shortShapeRates.includes(n) ? presets.shortShape : presets.shape;
  const scaled = (d: string) => `${Math.max(1000, Math.round(parseDurationMs(d)! * durationScale))}ms`;
  return {
    ok: true,
    value: {
      executor: "ramping-arrival-rate",
      startRate: 0,
      stages: [
        { target: n, duration: scaled(shape.rampUp) },
        { target: n, duration: scaled(shape.steady) },
        { target: 0, duration: scaled(shape.rampDown) },
      ],
      thresholds: p.thresholds,
      ratePerS: n,
    },
  };
}
