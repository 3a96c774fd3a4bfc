/**
 * What edgeload itself did not send of a run's schedule: iterations lost to shard restarts
 * (`interrupted`) and iterations a shard never started before its deadline (`unstarted`: its
 * first alarm came late, or it fell behind). Neither is the target's doing, so neither may
 * read as its finding: the saturation notes name edgeload (saturation.ts), and above a
 * bound share of the schedule the run cannot pass (run-verdict.ts). Pure.
 */
import type { CounterName } from "../metrics/metric-stats.ts";
import type { RunTotals } from "./run-totals.ts";
import type { Plan } from "../plan/plan.ts";
import type { RunSpec } from "../spec/types.ts";
import { stepsOfScenario } from "../spec/named-scenarios.ts";

/** The share of its schedule a run may leave unsent before it is inconclusive, unless its spec says (maxNotSentShare). */
export const DEFAULT_MAX_NOT_SENT_SHARE = 0.01;

/** The summary's "not sent by edgeload" figure (edgeload.totals.notSent). */
export interface NotSent {
  /** Iterations edgeload did not send: restarts + unstarted. */
  readonly count: number;
  /** Lost to shard restarts (the `interrupted` counter). */
  readonly restarts: number;
  /** Never started before a shard's deadline (the `unstarted` counter). */
  readonly unstarted: number;
  /** The schedule, in iterations, that `share` is of (scheduledIterations). */
  readonly scheduled: number;
  /** count / scheduled, 0 when nothing was scheduled. */
  readonly share: number;
  /** Above this share the run cannot pass: its spec's maxNotSentShare, or DEFAULT_MAX_NOT_SENT_SHARE. */
  readonly bound: number;
}

type LossCounters = Pick<Record<CounterName, number>, "interrupted" | "unstarted">;

/** The figure from a run's counters, its schedule's size and its spec's bound (absent: the default). */
export function notSentOf(counters: LossCounters, scheduled: number, bound: number | undefined): NotSent {
  const count = counters.interrupted + counters.unstarted;
  return {
    count,
    restarts: counters.interrupted,
    unstarted: counters.unstarted,
    scheduled,
    share: scheduled > 0 ? count / scheduled : 0,
    bound: bound ?? DEFAULT_MAX_NOT_SENT_SHARE,
  };
}

/**
 * The schedule's size in iterations. An arrival-rate run's is its plan's (the arrival
 * schedule's total); a VU run's is not fixed beforehand (the target's latency sets it), so
 * it is what the VUs finished plus what edgeload did not send. A run of named scenarios adds
 * up its scenarios', each by its own model.
 */
export function scheduledIterations(spec: RunSpec, plan: Plan, totals: RunTotals): number {
  if (!spec.scenarios?.length) {
    if (!spec.vus) return plan.totalIterations;
    const c = totals.select().counters;
    return c.iterations + c.interrupted + c.unstarted;
  }
  let scheduled = 0;
  for (const s of spec.scenarios) {
    if (!s.spec.vus) {
      scheduled += plan.scenarios?.find((p) => p.name === s.name)?.plan.totalIterations ?? 0;
      continue;
    }
    const c = totals.select({ steps: new Set(stepsOfScenario(s)) }).counters;
    scheduled += c.iterations + c.interrupted + c.unstarted;
  }
  return scheduled;
}

/**
 * Why the run cannot pass, when edgeload left more of its schedule unsent than its bound
 * (strictly above: a share at the bound passes); null otherwise.
 *
 * @example
 * notSentReason(notSentOf({ interrupted: 320, unstarted: 0 }, 10_000, undefined))
 * // → "edgeload did not send 3.2 % of the schedule (320 of 10,000 iterations: shard restarts); above the 1 % bound, so the run cannot pass"
 */
export function notSentReason(n: NotSent): string | null {
  if (n.count === 0 || n.share <= n.bound) return null;
  const causes = [n.restarts > 0 ? "shard restarts" : null, n.unstarted > 0 ? "never started before a shard's deadline" : null].filter(Boolean);
  const why = causes.length > 1 ? `${count(n.restarts)} to shard restarts, ${count(n.unstarted)} never started before a shard's deadline` : causes[0];
  return `edgeload did not send ${percent(n.share)} of the schedule (${count(n.count)} of ${count(n.scheduled)} iterations: ${why}); above the ${percent(n.bound)} bound, so the run cannot pass`;
}

/** What the figure says in words, its causes with their counts: "320 (3.2 % of 10,000): 320 lost to shard restarts". */
export function notSentText(n: NotSent): string {
  const parts = [
    n.restarts > 0 ? `${count(n.restarts)} lost to shard restarts` : null,
    n.unstarted > 0 ? `${count(n.unstarted)} never started before a shard's deadline` : null,
  ].filter(Boolean);
  return `${count(n.count)} (${percent(n.share)} of ${count(n.scheduled)}): ${parts.join(", ")}; bound ${percent(n.bound)}`;
}

/** A share as a percentage to two significant figures: 0.032 → "3.2 %", 0.0005 → "0.05 %". */
export function percent(share: number): string {
  return `${Number((share * 100).toPrecision(2))} %`;
}

const count = (n: number) => n.toLocaleString("en-US");
