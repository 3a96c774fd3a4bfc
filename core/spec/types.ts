/**
 * The decoded run spec: what the rest of the system sees after core/spec/run-spec.ts has
 * validated and normalised a request (durations in ms, rates per second, defaults filled).
 * Types and closed sets only, so that every module can name them without importing the
 * parser.
 */
import type { RateStage } from "../schedule/arrival-schedule.ts";
import type { OutputSpec } from "./outputs-schema.ts";
import type { Problem } from "./input-problem.ts";
import type { MetricKind, ThresholdInput } from "../metrics/thresholds.ts";
import type { VuProfile } from "../schedule/vu-schedule.ts";
import type { CaptureSpec } from "./capture.ts";
import type { ScenarioOptions } from "./builtin-scenarios.ts";
import type { DataSpec } from "./data-schema.ts";
import type { ScriptSpec } from "./script-schema.ts";

export type { Problem } from "./input-problem.ts";

/** Cloudflare's Durable Object location hints. */
export const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "apac-ne", "apac-se", "oc", "afr", "me"] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

/**
 * k6's executors that edgeload runs: two open-model (arrival rate), and closed-model ones
 * (VUs): two by time, two by iteration count (which end when their iterations are done),
 * and one whose VUs the user changes while it runs (externally-controlled: core/run/vu-control.ts).
 */
export const EXECUTOR_NAMES = [
  "constant-arrival-rate",
  "ramping-arrival-rate",
  "constant-vus",
  "ramping-vus",
  "per-vu-iterations",
  "shared-iterations",
  "externally-controlled",
] as const;
export type ExecutorName = (typeof EXECUTOR_NAMES)[number];

/** Closed-model executors: VUs run their flow back to back instead of arriving at a rate. */
export const isClosedModel = (executor: ExecutorName) => executor !== "constant-arrival-rate" && executor !== "ramping-arrival-rate";

/** What a step records into a declared custom metric: its request duration (trend), its success (rate), a count (counter). */
export const RECORD_KINDS = ["duration", "success", "count"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export type SpecResult = { ok: true; spec: RunSpec } | { ok: false; problems: Problem[] };

export interface StepSpec {
  readonly name: string;
  readonly method: (typeof HTTP_METHODS)[number];
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Serialised request body (objects become JSON with a content-type header). */
  readonly body: string | null;
  /** Statuses that count as success for http_req_failed (k6 default: 200–399). */
  readonly expectedStatuses: readonly number[] | null;
  readonly weight: number;
  readonly checks: readonly { name: string; status?: readonly number[]; bodyIncludes?: string }[];
  /** Values taken from the response for later steps' `{{captured.NAME}}`. */
  readonly capture: Readonly<Record<string, CaptureSpec>>;
  /** Think time after the step (a uniform draw in [minMs, maxMs]), or null. */
  readonly think: { readonly minMs: number; readonly maxMs: number } | null;
  /** Declared custom metrics this step records into, and what it records. */
  readonly record: Readonly<Record<string, RecordKind>>;
  /**
   * A Server-Sent Events stream: opened like a request (its connection slot is given back
   * at the headers), then read for `holdMs` (null: until the scenario ends).
   */
  readonly sse?: { readonly holdMs: number | null } | null;
  /** A Prometheus scrape: the response is parsed and these series stored with the run. */
  readonly scrape?: { readonly series: readonly string[] } | null;
}

/** A built-in scenario as a run uses it. */
export interface ScenarioSpec {
  readonly name: string;
  /** Seed set in R2 that shards load once, or null for scenarios that read none. */
  readonly seed: string | null;
  /** Client credentials and URIs; the secrets in here are redacted like `secrets`. */
  readonly options: ScenarioOptions;
}

export interface RunSpec {
  readonly name: string;
  /** Base URL without a trailing slash; step paths are appended to it. */
  readonly target: string;
  readonly steps: readonly StepSpec[];
  /** "pick": one step per iteration by weight; "sequence": every step, in order. */
  readonly flow: "pick" | "sequence";
  /** Custom metrics declared by the spec (besides a built-in scenario's). */
  readonly metrics: Readonly<Record<string, MetricKind>>;
  readonly scenario: ScenarioSpec | null;
  /** A k6 script whose function each iteration runs (k6-compat/); null for steps or a scenario. */
  readonly script?: ScriptSpec | null;
  /** The seed set the spec's own steps read records from (`{{data.FIELD}}`), or null. */
  readonly data?: DataSpec | null;
  /** The preset the profile came from, e.g. "rps300" (null when given explicitly). */
  readonly preset: string | null;
  /** "scenarios" for a run of several named scenarios, each with its own executor. */
  readonly executor: ExecutorName | "scenarios";
  /** The load profile as per-second rate stages (see ArrivalSchedule); empty for VU executors. */
  readonly stages: readonly RateStage[];
  /** The closed-model profile (see VuSchedule), or null for arrival-rate executors. */
  readonly vus: VuProfile | null;
  readonly durationMs: number;
  /** Peak arrival rate; 0 for VU executors, whose rate follows from the target's latency. */
  readonly peakRatePerS: number;
  readonly timeoutMs: number;
  /**
   * k6's gracefulStop: how long iterations in progress at the schedule's end may finish
   * (core/schedule/graceful-stop.ts). In a run of named scenarios, what the latest
   * scenario's graceful stop adds to the run's end. Absent in specs stored before it was
   * read (k6's 30 s then).
   */
  readonly gracefulStopMs?: number;
  readonly shards: number | "auto";
  readonly regions: readonly LocationHint[];
  readonly connectionSlots: number;
  readonly expectedLatencyMs: number;
  /** Maximum iterations in flight across the run (k6's maxVUs; the peak VUs for VU executors); beyond it, iterations drop. */
  readonly maxInFlight: number;
  /** Which of the spec's fields set maxInFlight for an arrival-rate run; absent: the default. */
  readonly maxInFlightFrom?: "maxVUs" | "preAllocatedVUs";
  /**
   * An arrival-rate run's preAllocatedVUs as given: a k6 script's VUs that take iterations
   * in turn before any other starts (k6-compat/runtime/vu-pool.ts); absent: not given.
   */
  readonly preAllocatedVUs?: number;
  readonly thresholds: Readonly<Record<string, readonly ThresholdInput[]>>;
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly tags: Readonly<Record<string, string>>;
  /** k6's summaryTrendStats: the trend figures the summary shows (`avg`, `p(99.9)`, `count`, …); absent: k6's. */
  readonly summaryTrendStats?: readonly string[];
  /** Declared trends of plain numbers, not ms (k6's Trend without isTime): shown without a unit. Absent: none. */
  readonly unitlessTrends?: readonly string[];
  /**
   * The share of the schedule (0–1) edgeload itself may fail to send — iterations lost to
   * shard restarts or never started by a shard's deadline — before the run is inconclusive
   * (core/run/not-sent.ts); absent: DEFAULT_MAX_NOT_SENT_SHARE (1 %).
   */
  readonly maxNotSentShare?: number;
  /** Budget cap: the run is refused when its estimated cost (USD) is above it; null: none. */
  readonly maxCostUsd?: number | null;
  /** Push outputs (OTLP/HTTP metrics), header values secret; absent or [] for none. */
  readonly outputs?: readonly OutputSpec[];
  /** The executor options as given (normalised), echoed in summaries. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Steps run once, in order, before any shard starts (by the coordinator, not per shard). */
  readonly setup?: readonly StepSpec[];
  /** Steps run once after the load has ended. */
  readonly teardown?: readonly StepSpec[];
  /** What the setup steps captured, filled in before shards start: `{{setup.NAME}}`. */
  readonly setupData?: Readonly<Record<string, string>>;
  /**
   * Named scenarios (k6's `scenarios`), each run by its own shards from its `startMs`; empty
   * for a run of one. This spec's `steps` are then all of theirs, named `scenario.step`.
   */
  readonly scenarios?: readonly NamedScenario[];
}

/** One scenario of a run with several: its own single-scenario spec and where it sits. */
export interface NamedScenario {
  readonly name: string;
  /** Offset from the run's T0 (whole seconds, so its windows line up with the run's). */
  readonly startMs: number;
  /** Index of its first step in the run's `steps`. */
  readonly stepOffset: number;
  readonly spec: RunSpec;
}
