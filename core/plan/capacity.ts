/**
 * The capacity table of a load ladder, as the reference suite's reports give it
 * (shared/AUTHRIM.md, "Reports"): recommended, peak and hard limit, each with the step that
 * is its evidence, plus the knee of the latency curve. Pure: `edgeload ladder` runs the
 * steps and hands their summaries here.
 *
 * The rules, over the steps in the order they ran (rates ascending):
 *
 * - A step **breaks** when its error rate (`http_req_failed`) is over the error limit, or
 *   the generator could not deliver it: more than the error limit of its iterations were
 *   dropped, or it achieved less than `minDelivered` (90%) of its target rate. The ladder
 *   stops climbing at the first step that breaks: higher steps could only break as well.
 * - **Hard limit**: the first step that breaks (null when none did).
 * - **Peak**: the highest step below the hard limit whose error rate is at most the limit.
 * - **Recommended**: the highest step below the hard limit that passed every threshold.
 *   With no thresholds it equals the peak; with failing latency thresholds it sits below.
 * - **Knee**: the first step whose p99 grew, relative to the step before it, by more than
 *   the rate did (p99ᵢ / p99ᵢ₋₁ > rateᵢ / rateᵢ₋₁) and by at least `kneeMinGrowthMs`
 *   (1 ms) in absolute terms, so that timer jitter at sub-millisecond latencies does not
 *   count. Steps without latency samples are skipped; rates are the nominal step rates.
 *
 * @example
 * const table = deriveCapacity(steps, { errorLimit: 0.01 });
 * table.hardLimit?.ratePerS // → 200: the first step with more than 1% errors
 */
import { inconclusive, PASSED, type Verdict } from "../run/verdict.ts";
import type { Summary } from "../run/summary.ts";
import { table } from "../run/text-format.ts";
import { formatMs } from "../metrics/clock-resolution.ts";
import { round3 } from "../metrics/rounding.ts";

/** One step of a ladder as measured: its nominal rate and the figures the rules read. */
export interface LadderStep {
  /** How the user named the step: "rps500" for a preset, "200/s" for a rate. */
  readonly label: string;
  /** The nominal rate of the step (a preset's steady rate). */
  readonly ratePerS: number;
  readonly runId: string;
  readonly status: string;
  /** Planned iterations per second over the whole run (ramps included), as the summary says. */
  readonly targetRatePerS: number;
  readonly achievedRatePerS: number;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
  /** Failed requests / completed requests (`http_req_failed`). */
  readonly errorRate: number;
  readonly iterations: number;
  readonly dropped: number;
  /** `metric threshold` of each failed threshold, e.g. "http_req_duration p(95)<200". */
  readonly failedThresholds: readonly string[];
  /** The step of the clock its latencies were timed with (clock-resolution.ts), if detected. */
  readonly clockResolutionMs?: number | null;
}

export interface CapacityRules {
  /** The error rate a step may have and still count, as a fraction: 0.01 = 1%. */
  readonly errorLimit: number;
  /** The smallest achieved / target rate for a delivered step; default 0.9. */
  readonly minDelivered?: number;
  /** The smallest p99 increase (ms) that can mark the knee; default 1. */
  readonly kneeMinGrowthMs?: number;
}

/** A capacity figure and the step that is its evidence. */
export interface CapacityFigure {
  readonly label: string;
  readonly ratePerS: number;
  readonly evidence: LadderStep;
  /** Why the step broke (hard limit only). */
  readonly reasons: readonly string[];
}

export interface Knee {
  readonly label: string;
  readonly ratePerS: number;
  readonly previousRatePerS: number;
  readonly previousP99Ms: number;
  readonly p99Ms: number;
  /** p99ᵢ / p99ᵢ₋₁ and rateᵢ / rateᵢ₋₁. */
  readonly p99Growth: number;
  readonly rateGrowth: number;
}

export interface CapacityTable {
  readonly errorLimit: number;
  readonly steps: ReadonlyArray<LadderStep & { readonly breaks: readonly string[] }>;
  readonly recommended: CapacityFigure | null;
  readonly peak: CapacityFigure | null;
  readonly hardLimit: CapacityFigure | null;
  readonly knee: Knee | null;
}

const DEFAULT_MIN_DELIVERED = 0.9;
const DEFAULT_KNEE_MIN_GROWTH_MS = 1;

/** The figures of one step, read from its run summary. */
export function stepFromSummary(label: string, ratePerS: number, summary: Summary): LadderStep {
  const m = summary.metrics as Record<string, { value?: number; count?: number; "p(95)"?: number; "p(99)"?: number } | undefined>;
  const e = summary.edgeload;
  return {
    label,
    ratePerS,
    runId: e.runId,
    status: e.status,
    targetRatePerS: e.targetRatePerS ?? 0, // ladders run arrival-rate profiles
    achievedRatePerS: e.achievedRatePerS,
    p95Ms: m.http_req_duration?.["p(95)"] ?? null,
    p99Ms: m.http_req_duration?.["p(99)"] ?? null,
    errorRate: m.http_req_failed?.value ?? 0,
    iterations: m.iterations?.count ?? 0,
    dropped: m.dropped_iterations?.count ?? 0,
    failedThresholds: e.thresholds.filter((t) => !t.ok).map((t) => `${t.metric} ${t.threshold}`),
    clockResolutionMs: e.clock?.resolutionMs ?? null,
  };
}

/** Why a step breaks (error rate over the limit, or not delivered); empty when it holds. */
export function breakReasons(step: LadderStep, rules: CapacityRules): string[] {
  const reasons: string[] = [];
  const limit = percent(rules.errorLimit);
  if (step.errorRate > rules.errorLimit) reasons.push(`error rate ${percent(step.errorRate)} over the ${limit} limit`);
  const planned = step.iterations + step.dropped;
  if (planned > 0 && step.dropped / planned > rules.errorLimit)
    reasons.push(`${percent(step.dropped / planned)} of iterations dropped (over the ${limit} limit)`);
  const minDelivered = rules.minDelivered ?? DEFAULT_MIN_DELIVERED;
  if (step.targetRatePerS > 0 && step.achievedRatePerS < minDelivered * step.targetRatePerS) {
    reasons.push(`achieved ${step.achievedRatePerS.toFixed(1)}/s of ${step.targetRatePerS.toFixed(1)}/s (under ${percent(minDelivered)})`);
  }
  return reasons;
}

/** Derives recommended, peak, hard limit and knee from the steps that ran, in order. */
export function deriveCapacity(steps: readonly LadderStep[], rules: CapacityRules): CapacityTable {
  const judged = steps.map((s) => ({ ...s, breaks: breakReasons(s, rules) }));
  const broken = judged.findIndex((s) => s.breaks.length > 0);
  const below = broken < 0 ? judged : judged.slice(0, broken);
  const figure = (s: (typeof judged)[number] | undefined): CapacityFigure | null => {
    if (!s) return null;
    const { breaks, ...evidence } = s;
    return { label: s.label, ratePerS: s.ratePerS, evidence, reasons: breaks };
  };
  return {
    errorLimit: rules.errorLimit,
    steps: judged,
    recommended: figure(below.findLast((s) => s.failedThresholds.length === 0)),
    peak: figure(below.findLast((s) => s.errorRate <= rules.errorLimit)),
    hardLimit: figure(judged[broken]),
    knee: findKnee(steps, rules.kneeMinGrowthMs ?? DEFAULT_KNEE_MIN_GROWTH_MS),
  };
}

/** The first step whose p99 grew faster than its rate (see the header for the rule). */
export function findKnee(steps: readonly LadderStep[], minGrowthMs = DEFAULT_KNEE_MIN_GROWTH_MS): Knee | null {
  const measured = steps.filter((s): s is LadderStep & { p99Ms: number } => s.p99Ms !== null && s.p99Ms > 0 && s.ratePerS > 0);
  for (let i = 1; i < measured.length; i++) {
    const before = measured[i - 1]!;
    const step = measured[i]!;
    const p99Growth = step.p99Ms / before.p99Ms;
    const rateGrowth = step.ratePerS / before.ratePerS;
    if (p99Growth > rateGrowth && step.p99Ms - before.p99Ms >= minGrowthMs) {
      return {
        label: step.label,
        ratePerS: step.ratePerS,
        previousRatePerS: before.ratePerS,
        previousP99Ms: before.p99Ms,
        p99Ms: step.p99Ms,
        p99Growth: round3(p99Growth),
        rateGrowth: round3(rateGrowth),
      };
    }
  }
  return null;
}

/** The steps and the capacity table as text, for the terminal. */
export function renderCapacity(capacity: CapacityTable): string {
  // Latencies to the step of the clock that timed them (the coarsest of the ladder's runs).
  const clock = Math.max(0, ...capacity.steps.map((s) => s.clockResolutionMs ?? 0)) || null;
  const ms = (v: number | null) => (v === null ? "-" : formatMs(v, clock));
  const figures = (s: LadderStep) => [String(s.ratePerS), s.achievedRatePerS.toFixed(1), ms(s.p95Ms), ms(s.p99Ms), percent(s.errorRate), String(s.dropped)];
  const out = [
    "",
    "  LADDER",
    ...table(
      ["step", "rate/s", "achieved/s", "p95", "p99", "errors", "dropped", "thresholds", "breaks"],
      capacity.steps.map((s) => [s.label, ...figures(s), s.failedThresholds.length ? `✗ ${s.failedThresholds.join(", ")}` : "✓", s.breaks.join("; ") || "-"]),
    ),
  ];
  const rows = (["recommended", "peak", "hardLimit"] as const).map((key) => {
    const f = capacity[key];
    const name = key === "hardLimit" ? "hard limit" : key;
    if (!f) return [name, key === "hardLimit" ? "not reached" : "none", "-", "-", "-", "-", "-", "-", "-"];
    return [name, ...figures(f.evidence), f.evidence.failedThresholds.join(", ") || "-", f.evidence.runId];
  });
  out.push(
    "",
    `  CAPACITY (error limit ${percent(capacity.errorLimit)})`,
    ...table(["", "rate/s", "achieved/s", "p95", "p99", "errors", "dropped", "failed thresholds", "run"], rows),
  );
  const k = capacity.knee;
  out.push(
    k
      ? `  knee      ${k.ratePerS}/s: p99 ${ms(k.previousP99Ms)} → ${ms(k.p99Ms)} (×${k.p99Growth}) while the rate grew ×${k.rateGrowth} from ${k.previousRatePerS}/s`
      : "  knee      none within the ladder: p99 never grew faster than the rate",
    "",
  );
  return out.join("\n");
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(2)}%`;
}

/**
 * A ladder's verdict (core/run/verdict.ts): passed when it established a capacity — some
 * step held, whether a later one broke or every one held ("at least the top step") —
 * inconclusive when none was measured, or the first step already broke (the capacity is
 * somewhere below the ladder, not a figure). A step run that ended in error, inconclusive
 * or aborted stops the ladder with its own code (cli/ladder-command.ts).
 */
export function ladderVerdict(capacity: CapacityTable): Verdict {
  if (capacity.steps.length === 0) return inconclusive("no step was measured");
  if (capacity.peak === null && capacity.recommended === null) {
    const first = capacity.steps[0]!;
    return inconclusive(`the first step (${first.label}) already broke: ${first.breaks.join("; ")}; the capacity is below the ladder, start it lower`);
  }
  return PASSED;
}
