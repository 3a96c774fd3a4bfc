/**
 * The spec's custom metrics (`metrics`, filled by steps' `record`) and its `thresholds`
 * (k6 syntax, parsed by core/metrics/thresholds.ts). Thresholds may name built-in metrics, a
 * built-in scenario's custom metrics and the spec's own, so both are read from the raw
 * input before the schema has run: the parser then reports all problems in one pass.
 */
import { z } from "zod";
import { SCENARIO_BY_NAME } from "./builtin-scenarios.ts";
import type { MetricKind, ThresholdInput } from "../metrics/thresholds.ts";
import type { RunSpec } from "./types.ts";

const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** What a declared metric may be: k6's four kinds (a gauge is a k6 script's `new Gauge(name)`). */
const DECLARED_KINDS = ["counter", "rate", "trend", "gauge"] as const;

/**
 * A declared metric: its kind and, for a trend or gauge, whether its values are durations in
 * ms (`time`, the default) or plain numbers (false: k6's `new Trend(name)` without isTime,
 * shown without a unit). A gauge's samples are kept as a trend too, for its min and max.
 */
export const metricsSchema = z
  .record(z.string().regex(METRIC_NAME, "use 1–64 letters, digits and _"), z.object({ type: z.enum(DECLARED_KINDS), time: z.boolean().optional() }).strict())
  .default({});

/** The declared trends and gauges whose values are plain numbers (`time: false`), from raw input or a parsed spec. */
export function unitlessTrends(metrics: unknown): string[] {
  if (typeof metrics !== "object" || metrics === null || Array.isArray(metrics)) return [];
  return Object.entries(metrics).flatMap(([name, m]) => {
    const type = (m as { type?: unknown } | null)?.type;
    return (type === "trend" || type === "gauge") && (m as { time?: unknown }).time === false ? [name] : [];
  });
}

const thresholdEntry = z.union([
  z.string(),
  z.object({ threshold: z.string(), abortOnFail: z.boolean().optional(), delayAbortEval: z.union([z.string(), z.number()]).optional() }).strict(),
]);

export const thresholdsSchema = z.record(z.string(), z.array(thresholdEntry)).default({});

/** Custom metrics of the spec's scenario and its own `metrics`, by kind (for thresholds). */
export function customMetricKinds(spec: Pick<RunSpec, "scenario"> & Partial<Pick<RunSpec, "metrics">>): Readonly<Record<string, MetricKind>> {
  // Specs stored before `metrics` existed have none.
  return { ...(spec.scenario ? (SCENARIO_BY_NAME[spec.scenario.name]?.metrics ?? {}) : {}), ...spec.metrics };
}

/** The spec's declared metrics from raw input, when well-formed (else the schema reports it). */
export function metricsInput(input: unknown): Record<string, MetricKind> {
  const raw = (input as { metrics?: unknown } | null)?.metrics;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  const out: Record<string, MetricKind> = {};
  for (const [name, m] of Object.entries(raw)) {
    const type = (m as { type?: unknown } | null)?.type;
    if ((DECLARED_KINDS as readonly unknown[]).includes(type)) out[name] = type as MetricKind;
  }
  return out;
}

/** The thresholds map from raw input, when it has the right shape (else the schema reports it). */
export function thresholdInput(input: unknown): Record<string, ThresholdInput[]> {
  const raw = (input as { thresholds?: unknown } | null)?.thresholds;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => Array.isArray(v))) as Record<string, ThresholdInput[]>;
}
