/**
 * What must hold after every chaos schedule (./schedule.ts), whatever faults it drew.
 * Pure: a run is observed in workerd (test/support/chaos-run.ts) and judged here, by the
 * bench (./run-chaos.ts) and by the fixed seeds of `npm test`
 * (test/workers-tree/chaos-seeds.test.ts) alike.
 */
import { STOP_WITHIN_MS } from "../faults/fault-table.ts";
import { CHAOS_RUN, type ChaosSchedule } from "./schedule.ts";

/** A run must reach its final status this soon after its schedule and its last fault are over. */
export const END_WITHIN_MS = 30_000;

/** What a run of a schedule left, read from the target, D1, the API and the logs. */
export interface ChaosObservation {
  readonly schedule: ChaosSchedule;
  readonly runId: string;
  readonly status: string;
  /** Requests of the run the target's ledger counted. */
  readonly received: number;
  /** Summed over the run's rows in D1's `windows`. */
  readonly stored: {
    readonly sent: number;
    readonly dropped: number;
    readonly requests: number;
    readonly connectionErrors: number;
    readonly timeouts: number;
    readonly status5xx: number;
    readonly checksFailed: number;
  };
  /**
   * From the run's summary (GET /v1/runs/:id/summary); `interrupted`: iterations restarted shards counted lost to their
   * restarts; `notSent`: what edgeload did not send of the schedule and the run's bound (core/run/not-sent.ts).
   */
  readonly summary: {
    readonly sent: number;
    readonly requests: number;
    readonly interrupted: number;
    readonly notSent?: { readonly share: number; readonly bound: number };
  };
  /** D1's `shards` rows of the run: how many, and their requests. */
  readonly shardRows: { readonly count: number; readonly requests: number };
  /** Shards the run's status view says are done. */
  readonly shardsDone: number;
  /** From the later of the run's scheduled end and its last fault to its final status. */
  readonly endedAfterMs: number;
  /** From the abort to every shard stopped (null: no abort, or not stopped in 30 s). */
  readonly stoppedAfterMs: number | null;
  /** What the target answered, as the shards' fetch saw it (in workerd, ../faults/in-workerd/target-answers.ts). */
  readonly fetched: FetchedAnswers;
  /** Where the run's secrets were found: log lines, D1 tables, API answers. */
  readonly secretsFound: readonly string[];
}

/**
 * The run's requests as the shards' fetch saw them settle: answers with a 5xx status, a
 * garbage body (a 200 that is not the document), timeouts, connection errors.
 */
export interface FetchedAnswers {
  readonly status5xx: number;
  readonly garbage: number;
  readonly timeouts: number;
  readonly connectionErrors: number;
}

export const INVARIANTS = ["agree", "once", "failures", "ends", "verdict", "secrets"] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Judgement {
  readonly held: Readonly<Record<Invariant, boolean>>;
  /** Why each invariant that broke did, in words. */
  readonly why: readonly string[];
  readonly lost: number;
  /** Iterations of the schedule neither sent nor dropped (0 when aborted: what was never due is not counted). */
  readonly unaccounted: number;
  readonly lossBound: number;
  readonly doubleCounted: number;
}

export const shardCount = (schedule: ChaosSchedule) => (schedule.shape === "tree" ? 6 : 2);
export const scheduledIterations = () => (CHAOS_RUN.ratePerS * CHAOS_RUN.durationMs) / 1000;

/**
 * The loss a schedule makes unavoidable, in results: a restarted shard's results in its
 * open windows died with it though its requests reached the target. It resumes from the
 * cursor its closed windows cover (workers/shard/cursor-marks.ts) and counts every
 * iteration after it interrupted (and dropped), those it had sent in its open windows
 * among them. So the loss is at most what the run counts interrupted, whatever the shard
 * was sending then — a burst when it was catching up after a late start (flat seed 74),
 * which a bound of its steady rate × time did not hold. No schedule without a shard
 * restart may lose anything. (docs/architecture.md, "Shards".)
 */
export function lossBoundOf(schedule: ChaosSchedule, interrupted: number): number {
  return schedule.faults.some((f) => f.kind === "shard-restart") ? interrupted : 0;
}

export function judge(o: ChaosObservation): Judgement {
  const why: string[] = [];
  const shards = shardCount(o.schedule);
  const scheduled = scheduledIterations();
  const aborted = o.schedule.faults.some((f) => f.kind === "abort");
  const lossBound = lossBoundOf(o.schedule, o.summary.interrupted);
  const counted = o.stored.sent + o.stored.dropped;
  // Unaccounted: what the schedule held and no one counted sent or dropped. Never excused:
  // a restarted shard counts what it lost interrupted.
  const unaccounted = aborted ? 0 : Math.max(0, scheduled - counted);
  // Lost: what the target received and D1 lacks, what the summary has and a store lacks.
  // Views of one loss (a result that died with its shard is missing from D1 and from the
  // summary alike): the largest.
  const lost = Math.max(
    o.received - o.stored.sent,
    o.summary.requests - o.stored.requests,
    o.summary.requests - o.shardRows.requests,
    o.summary.sent - o.stored.sent,
    0,
  );
  // Counted twice: more than the schedule, sent but never received (beyond what could not arrive), a store above the summary.
  const doubleCounted =
    Math.max(0, counted - scheduled) +
    Math.max(0, o.stored.sent - o.received - o.stored.connectionErrors - o.stored.timeouts) +
    Math.max(0, o.stored.requests - o.summary.requests) +
    Math.max(0, o.shardRows.requests - o.summary.requests) +
    Math.max(0, o.stored.sent - o.summary.sent);
  const agree = unaccounted === 0 && lost <= lossBound && o.shardRows.count === shards;
  if (!agree)
    why.push(
      `agree: lost ${lost} (bound ${lossBound}, interrupted), ${unaccounted} neither sent nor dropped; scheduled ${scheduled}, counted ${counted}, received ${o.received}, D1 sent ${o.stored.sent} requests ${o.stored.requests}, summary sent ${o.summary.sent} requests ${o.summary.requests}, shard rows ${o.shardRows.count}/${shards} with ${o.shardRows.requests}`,
    );
  const once = doubleCounted === 0;
  if (!once) why.push(`once: ${doubleCounted} counted twice`);
  const failures = failuresCounted(o);
  if (failures) why.push(failures);
  const stopped = !aborted || (o.stoppedAfterMs !== null && o.stoppedAfterMs < STOP_WITHIN_MS);
  const ends = o.endedAfterMs <= END_WITHIN_MS && stopped;
  if (!ends)
    why.push(
      `ends: final ${(o.endedAfterMs / 1000).toFixed(1)} s after the schedule (≤ ${END_WITHIN_MS / 1000} s); shards stopped ${o.stoppedAfterMs ?? "never"} ms after the abort`,
    );
  // Data missing: a shard that never reported, or more lost than the faults explain. Then never `passed`.
  const missing = o.shardsDone < shards || o.shardRows.count < shards || lost > lossBound || unaccounted > 0;
  // More of the schedule unsent by edgeload (restarts, late starts) than the run's bound: never `passed` either.
  const unsent = o.summary.notSent !== undefined && o.summary.notSent.share > o.summary.notSent.bound;
  const expected = aborted ? ["aborted"] : missing || unsent ? ["inconclusive"] : ["passed"];
  const verdict = expected.includes(o.status);
  if (!verdict) why.push(`verdict: ${o.status}, expected ${expected.join(" or ")} (shards done ${o.shardsDone}/${shards}${missing ? ", data missing" : ""})`);
  const secrets = o.secretsFound.length === 0;
  if (!secrets) why.push(`secrets: found in ${o.secretsFound.join(", ")}`);
  return { held: { agree, once, failures: failures === null, ends, verdict, secrets }, why, lost, unaccounted, lossBound, doubleCounted };
}

/**
 * Every failure the target caused is counted as one, once: D1's 5xx, timeouts and failed
 * checks (the step checks for a 200 with the document) are each no more than the shards'
 * fetch saw, and — unless a shard was restarted — no fewer. A restarted shard's requests in
 * flight die with it whatever window they were sent in, answered but recorded nowhere (the
 * interrupted count covers only its open windows), so no lower bound is known then. Null
 * when that holds, else why not. A bad target answer is drawn to test it
 * (schedule.ts).
 */
function failuresCounted(o: ChaosObservation): string | null {
  const f = o.fetched;
  const restarted = o.schedule.faults.some((x) => x.kind === "shard-restart");
  const slack = restarted ? Number.POSITIVE_INFINITY : 0;
  const views: Array<[string, number, number]> = [
    ["5xx", o.stored.status5xx, f.status5xx],
    ["timeouts", o.stored.timeouts, f.timeouts],
    ["failed checks", o.stored.checksFailed, f.status5xx + f.garbage + f.timeouts + f.connectionErrors],
  ];
  const off = views.filter(([, stored, seen]) => stored > seen || stored < seen - slack);
  if (!off.length) return null;
  return `failures: ${off.map(([name, stored, seen]) => `${name} ${stored} in D1, ${seen} answered`).join("; ")}${restarted ? " (a shard restarted: at most)" : ""}`;
}
