/**
 * The second decoding step of a spec, as k6 decodes scenarios: the executor's own options,
 * chosen by `executor` (a discriminated union), with k6's names and defaults. From them come
 * the load profile the rest of the system runs: per-second rate stages for the open-model
 * executors (see ArrivalSchedule) or a VU profile for the closed-model ones (see VuSchedule).
 */
import { z } from "zod";
import type { RateStage } from "../schedule/arrival-schedule.ts";
import type { Problem } from "./input-problem.ts";
import type { VuProfile } from "../schedule/vu-schedule.ts";
import { duration, nonNegative, positiveInt, toProblems } from "./fields.ts";
import { EXECUTOR_NAMES, type ExecutorName } from "./types.ts";
import { DEFAULT_GRACEFUL_STOP_MS } from "../schedule/graceful-stop.ts";

/** The fields decoded by the executor's own schema. */
export const EXECUTOR_FIELDS = [
  "executor",
  "rate",
  "timeUnit",
  "duration",
  "startRate",
  "stages",
  "vus",
  "startVUs",
  "gracefulRampDown",
  "iterations",
  "maxDuration",
  "gracefulStop",
] as const;

/** Every executor's: how long iterations in progress at the end may finish (core/schedule/graceful-stop.ts). */
const gracefulStop = duration("graceful stop").default(DEFAULT_GRACEFUL_STOP_MS);

const constantArrivalRate = z.object({
  executor: z.literal("constant-arrival-rate"),
  rate: nonNegative,
  timeUnit: duration("time unit").default(1000),
  duration: duration("duration"),
  gracefulStop,
});

const rampingArrivalRate = z.object({
  executor: z.literal("ramping-arrival-rate"),
  startRate: nonNegative.default(0),
  timeUnit: duration("time unit").default(1000),
  stages: z.array(z.object({ target: nonNegative, duration: duration("duration") }).strict()).min(1, "at least one stage is required"),
  gracefulStop,
});

const constantVus = z
  .object({
    executor: z.literal("constant-vus"),
    vus: positiveInt,
    duration: duration("duration"),
    gracefulStop,
  })
  .strict();

const rampingVus = z
  .object({
    executor: z.literal("ramping-vus"),
    // k6's default: one VU at the start.
    startVUs: z.number().int().nonnegative().default(1),
    stages: z.array(z.object({ target: z.number().int().nonnegative(), duration: duration("duration") }).strict()).min(1, "at least one stage is required"),
    gracefulRampDown: duration("graceful ramp-down").default(30_000),
    gracefulStop,
  })
  .strict();

// k6's defaults: 1 VU, 1 iteration, at most 10 minutes.
const iterationFields = {
  vus: positiveInt.default(1),
  iterations: positiveInt.default(1),
  maxDuration: duration("max duration").default(600_000),
  gracefulStop,
};
const perVuIterations = z.object({ executor: z.literal("per-vu-iterations"), ...iterationFields }).strict();
const sharedIterations = z
  .object({ executor: z.literal("shared-iterations"), ...iterationFields })
  .strict()
  .refine((e) => e.iterations >= e.vus, { path: ["iterations"], message: "must be at least vus (k6 refuses more VUs than shared iterations)" });

/**
 * k6's externally-controlled (v1.8.1 lib/executor/externally_controlled.go): `vus` active at
 * the start (k6's default 0), `maxVUs` the most it may be scaled to (default `vus`), a
 * `duration` it must have. k6 refuses a gracefulStop for it (its iterations are cut at the
 * end): the strict schema names it, and its graceful stop is 0.
 */
const externallyControlled = z
  .object({
    executor: z.literal("externally-controlled"),
    vus: z.number().int().nonnegative().default(0),
    maxVUs: positiveInt.optional(),
    duration: duration("duration").optional(),
  })
  .strict()
  .refine((e) => e.duration !== undefined, { path: ["duration"], message: "required: how long the run lasts (k6 requires it too)" })
  .transform((e) => ({ ...e, duration: e.duration ?? 0, maxVUs: e.maxVUs ?? e.vus, gracefulStop: 0 }))
  .refine((e) => e.maxVUs >= 1, { path: ["maxVUs"], message: "must be at least 1 (the most VUs the run may be scaled to; k6's default is vus)" })
  .refine((e) => e.maxVUs >= e.vus, { path: ["vus"], message: "must be at most maxVUs (k6 refuses more active VUs than maxVUs)" });

/** Fields an executor takes that a run spec also has at its top level for others (maxVUs, an arrival-rate run's pool). */
const TOP_LEVEL_FIELDS_OF: Readonly<Partial<Record<ExecutorName, readonly string[]>>> = { "externally-controlled": ["maxVUs"] };

const EXECUTORS: { readonly [E in ExecutorName]: z.ZodType } = {
  "constant-arrival-rate": constantArrivalRate,
  "ramping-arrival-rate": rampingArrivalRate,
  "constant-vus": constantVus,
  "ramping-vus": rampingVus,
  "per-vu-iterations": perVuIterations,
  "shared-iterations": sharedIterations,
  "externally-controlled": externallyControlled,
};

type ArrivalOptions = z.output<typeof constantArrivalRate> | z.output<typeof rampingArrivalRate>;
type IterationOptions = z.output<typeof perVuIterations> | z.output<typeof sharedIterations>;
export type ExecutorOptions =
  | ArrivalOptions
  | z.output<typeof constantVus>
  | z.output<typeof rampingVus>
  | IterationOptions
  | z.output<typeof externallyControlled>;

/**
 * The executor's options from raw input, or null with every problem pushed: an unknown
 * executor, a bad value, or an option of another executor (named field by field).
 */
export function decodeExecutor(input: unknown, problems: Problem[]): ExecutorOptions | null {
  const executorName = (input as { executor?: unknown } | null)?.executor;
  const schema =
    typeof executorName === "string" && (EXECUTOR_NAMES as readonly string[]).includes(executorName) ? EXECUTORS[executorName as ExecutorName] : undefined;
  if (!schema) {
    problems.push({ field: "executor", detail: `must be one of ${EXECUTOR_NAMES.join(", ")}` });
    return null;
  }
  const fields: readonly string[] = [...EXECUTOR_FIELDS, ...(TOP_LEVEL_FIELDS_OF[executorName as ExecutorName] ?? [])];
  const executorInput =
    typeof input === "object" && input !== null ? Object.fromEntries(Object.entries(input).filter(([k, v]) => fields.includes(k) && v !== undefined)) : {};
  const exec = schema.safeParse(executorInput);
  if (exec.success) return exec.data as ExecutorOptions;
  for (const issue of exec.error.issues) {
    // An option of another executor (e.g. `rate` with constant-vus): name each field.
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) problems.push({ field: key, detail: `not an option of the ${String(executorName)} executor` });
    } else {
      problems.push(...toProblems(new z.ZodError([issue])));
    }
  }
  return null;
}

/** The VU profile of a closed-model executor, or null for arrival-rate ones. */
export function vuProfile(e: ExecutorOptions): VuProfile | null {
  if (e.executor === "externally-controlled") {
    return { startVUs: e.maxVUs, stages: [{ target: e.maxVUs, durationMs: e.duration }], gracefulRampDownMs: 0, externallyControlled: { startVUs: e.vus } };
  }
  if (e.executor === "constant-vus") return { startVUs: e.vus, stages: [{ target: e.vus, durationMs: e.duration }], gracefulRampDownMs: 30_000 };
  if (e.executor === "ramping-vus") {
    return { startVUs: e.startVUs, stages: e.stages.map((s) => ({ target: s.target, durationMs: s.duration })), gracefulRampDownMs: e.gracefulRampDown };
  }
  if (e.executor === "per-vu-iterations" || e.executor === "shared-iterations") {
    return {
      startVUs: e.vus,
      stages: [{ target: e.vus, durationMs: e.maxDuration }],
      gracefulRampDownMs: 0,
      iterations: { kind: e.executor === "per-vu-iterations" ? "per-vu" : "shared", count: e.iterations },
    };
  }
  return null;
}

/** The per-second rate stages of an arrival-rate executor; empty for VU executors. */
export function rateStages(e: ExecutorOptions): RateStage[] {
  if (e.executor !== "constant-arrival-rate" && e.executor !== "ramping-arrival-rate") return [];
  const perS = (rate: number) => (rate * 1000) / e.timeUnit;
  if (e.executor === "constant-arrival-rate") {
    return [{ durationMs: e.duration, fromPerS: perS(e.rate), toPerS: perS(e.rate) }];
  }
  let from = perS(e.startRate);
  return e.stages.map((s) => {
    const stage = { durationMs: s.duration, fromPerS: from, toPerS: perS(s.target) };
    from = stage.toPerS;
    return stage;
  });
}

/**
 * Without preAllocatedVUs/maxVUs, allow one second's worth of peak arrivals in flight
 * (at least 50): enough for responses up to ~1 s before iterations start to drop.
 */
export function defaultInFlight(peakRatePerS: number): number {
  return Math.max(50, Math.ceil(peakRatePerS));
}
