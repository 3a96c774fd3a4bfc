/**
 * What must hold after every chaos schedule (./schedule.ts), whatever faults it drew.
 * Pure: a run is observed in workerd (../faults/in-workerd/chaos-run.ts) and judged here,
 * by the bench (./run-chaos.ts) and by the fixed seeds of `npm test`
 * (test/workers-tree/chaos-seeds.test.ts) alike. The times it is held to are in
 * ./deadlines.ts.
 */
import { STOP_WITHIN_MS } from "../faults/fault-table.ts";
import { d1OutageOutcome, LONGEST_RETRY_WAIT_MS, runDeadlineMs } from "./deadlines.ts";
import { CHAOS_RUN, type ChaosSchedule } from "./schedule.ts";

/** A run must reach its final status this soon after its schedule and its last fault are over. */
export const END_WITHIN_MS = 30_000;

/** What a run of a schedule left, read from the target, D1, the API and the logs. */
export interface ChaosObservation {
  readonly schedule: ChaosSchedule;
  readonly runId: string;
  readonly status: string;
  /** The run's t0 (epoch ms): as its coordinator set it, or planned when its setup was killed. */
  readonly t0Ms: number;
  /** When the harness saw the final status (epoch ms); null: not final when it stopped waiting, past the deadline. */
  readonly finalAtMs: number | null;
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
   * restarts; `notSent`: what edgeload did not send of the schedule and the run's bound (core/run/not-sent.ts), null
   * when the summary has none.
   */
  readonly summary: {
    readonly sent: number;
    readonly dropped: number;
    readonly requests: number;
    readonly interrupted: number;
    readonly notSent: { readonly share: number; readonly bound: number } | null;
  };
  /** D1's `shards` rows of the run: how many, and their requests. */
  readonly shardRows: { readonly count: number; readonly requests: number };
  /** Shards the run's status view says are done. */
  readonly shardsDone: number;
  /** From when the run's last reason to go on was over (deadlines.ts scheduleOverAtMs) to its final status. */
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
  /**
   * Cut before they settled, at their iteration's graceful stop or the shard's stop: sent,
   * and neither a result nor, if the cut came before the request left the isolate, received
   * (a shard that starts late sends its last iterations right before that stop: chaos tree
   * seed 170, under load).
   */
  readonly cut: number;
}

export const INVARIANTS = ["agree", "once", "failures", "ends", "deadline", "verdict", "unsent", "secrets"] as const;
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

/**
 * What the schedule says of the run's end. `neverStarted`: its setup was killed, so it sent
 * nothing and ends `error` at its setup deadline (`aborted` if aborted meanwhile).
 * `mayGiveUp`/`mustGiveUp`: D1 was away long enough that the coordinator may, or must, give
 * the run up (`error`, deadlines.ts d1OutageOutcome). `givenUp`: it did.
 */
function endOf(o: ChaosObservation) {
  const faults = o.schedule.faults;
  const aborted = faults.some((f) => f.kind === "abort");
  const neverStarted = faults.some((f) => f.kind === "setup-killed");
  const longD1 = faults.find((f) => f.kind === "d1-refusing-long");
  const outcome = longD1 && !neverStarted ? d1OutageOutcome(longD1) : "finished";
  const givenUp = outcome !== "finished" && o.status === "error";
  return { aborted, neverStarted, longD1: longD1 !== undefined, mayGiveUp: outcome !== "finished", mustGiveUp: outcome === "given-up", givenUp };
}

/** How many requests were lost or double counted, from the stores a run of this end keeps whole. */
function countsOf(o: ChaosObservation, end: ReturnType<typeof endOf>) {
  const scheduled = scheduledIterations();
  // A given-up run's D1 windows hold only what was written before D1 went away: its counts are the summary's.
  const counted = end.givenUp ? o.summary.sent + o.summary.dropped : o.stored.sent + o.stored.dropped;
  // Unaccounted: what the schedule held and no one counted sent or dropped. Never excused:
  // a restarted shard counts what it lost interrupted. Nothing was due of an aborted run's rest, or of one never started.
  const unaccounted = end.aborted || end.neverStarted ? 0 : Math.max(0, scheduled - counted);
  // Lost: what the target received and D1 lacks, what the summary has and a store lacks.
  // Views of one loss (a result that died with its shard is missing from D1 and from the
  // summary alike): the largest.
  const lost = end.givenUp
    ? Math.max(o.received - o.summary.sent, 0)
    : Math.max(
        o.received - o.stored.sent,
        o.summary.requests - o.stored.requests,
        o.summary.requests - o.shardRows.requests,
        o.summary.sent - o.stored.sent,
        0,
      );
  // Counted twice: more than the schedule, sent but never received (beyond what could not
  // arrive: connection errors, timeouts, requests cut in flight), a store above the summary.
  const doubleCounted =
    Math.max(0, counted - scheduled) +
    Math.max(0, o.stored.sent - o.received - o.stored.connectionErrors - o.stored.timeouts - o.fetched.cut) +
    Math.max(0, o.stored.requests - o.summary.requests) +
    Math.max(0, o.shardRows.requests - o.summary.requests) +
    Math.max(0, o.stored.sent - o.summary.sent);
  // A run that never started sent nothing, anywhere.
  const sentUnstarted = end.neverStarted ? o.received + o.stored.sent + o.summary.sent : 0;
  return { scheduled, counted, unaccounted, lost, doubleCounted, sentUnstarted };
}

/** The statuses the run may end with: the verdict invariant. */
function expectedStatuses(o: ChaosObservation, end: ReturnType<typeof endOf>, missing: boolean): string[] {
  if (end.neverStarted) return [end.aborted ? "aborted" : "error"];
  // An abort whose end was written before D1 went away (flat seed 46: abort and outage at 3.3 s) ends the run aborted.
  if (end.mustGiveUp) return end.aborted ? ["aborted", "error"] : ["error"];
  // Over the bound of what edgeload did not send: `inconclusive` too — that it is not `passed` is the unsent invariant's.
  const overBound = o.summary.notSent !== null && o.summary.notSent.share > o.summary.notSent.bound;
  const finished = end.aborted ? ["aborted"] : missing ? ["inconclusive"] : overBound ? ["passed", "inconclusive"] : ["passed"];
  return end.mayGiveUp ? [...finished, "error"] : finished;
}

export function judge(o: ChaosObservation): Judgement {
  const why: string[] = [];
  const shards = shardCount(o.schedule);
  const end = endOf(o);
  const lossBound = lossBoundOf(o.schedule, o.summary.interrupted);
  const { scheduled, counted, unaccounted, lost, doubleCounted, sentUnstarted } = countsOf(o, end);
  const agree = unaccounted === 0 && lost <= lossBound && o.shardRows.count === shards && sentUnstarted === 0;
  if (!agree)
    why.push(
      `agree (${o.status}): lost ${lost} (bound ${lossBound}, interrupted), ${unaccounted} neither sent nor dropped${end.neverStarted ? `, ${sentUnstarted} sent by a run that never started` : ""}; scheduled ${scheduled}, counted ${counted}, received ${o.received}, D1 sent ${o.stored.sent} requests ${o.stored.requests}, summary sent ${o.summary.sent} requests ${o.summary.requests}, shard rows ${o.shardRows.count}/${shards} with ${o.shardRows.requests}`,
    );
  const once = doubleCounted === 0;
  if (!once)
    why.push(
      `once: ${doubleCounted} counted twice; scheduled ${scheduled}, counted ${counted} (D1 sent ${o.stored.sent} dropped ${o.stored.dropped}), received ${o.received}, D1 connection errors ${o.stored.connectionErrors} timeouts ${o.stored.timeouts}, cut in flight ${o.fetched.cut}, D1 requests ${o.stored.requests}, summary sent ${o.summary.sent} requests ${o.summary.requests}, shard rows ${o.shardRows.requests}`,
    );
  const failures = failuresCounted(o, end.givenUp);
  if (failures) why.push(failures);
  const stopped = !end.aborted || (o.stoppedAfterMs !== null && o.stoppedAfterMs < STOP_WITHIN_MS);
  // After a long D1 outage the coordinator's tries are up to LONGEST_RETRY_WAIT_MS apart: the one after D1 is back ends it.
  const endWithinMs = END_WITHIN_MS + (end.longD1 ? LONGEST_RETRY_WAIT_MS : 0);
  const ends = o.finalAtMs !== null && o.endedAfterMs <= endWithinMs && stopped;
  if (!ends)
    why.push(
      `ends: final ${o.finalAtMs === null ? "never" : `${(o.endedAfterMs / 1000).toFixed(1)} s`} after the schedule (≤ ${endWithinMs / 1000} s); shards stopped ${o.stoppedAfterMs ?? "never"} ms after the abort`,
    );
  const deadlineMs = runDeadlineMs(o.t0Ms);
  const deadline = o.finalAtMs !== null && o.finalAtMs <= deadlineMs;
  if (!deadline)
    why.push(
      `deadline: ${o.finalAtMs === null ? `still ${o.status}` : `final ${((o.finalAtMs - deadlineMs) / 1000).toFixed(1)} s`} past its deadline, t0 + ${(deadlineMs - o.t0Ms) / 1000} s`,
    );
  // Data missing: a shard that never reported, or more lost than the faults explain. Then never `passed`.
  const missing = o.shardsDone < shards || o.shardRows.count < shards || lost > lossBound || unaccounted > 0;
  const expected = expectedStatuses(o, end, missing);
  const verdict = expected.includes(o.status);
  if (!verdict) why.push(`verdict: ${o.status}, expected ${expected.join(" or ")} (shards done ${o.shardsDone}/${shards}${missing ? ", data missing" : ""})`);
  const unsent = unsentHeld(o);
  if (unsent) why.push(unsent);
  const secrets = o.secretsFound.length === 0;
  if (!secrets) why.push(`secrets: found in ${o.secretsFound.join(", ")}`);
  return {
    held: { agree, once, failures: failures === null, ends, deadline, verdict, unsent: unsent === null, secrets },
    why,
    lost,
    unaccounted,
    lossBound,
    doubleCounted,
  };
}

/**
 * No run passes while the summary's own figure of what edgeload did not send is above the
 * run's bound (core/run/not-sent.ts, run-verdict.ts): the summary read against itself, apart
 * from the harness's counts. A summary without the figure breaks it too. Null when it holds.
 */
function unsentHeld(o: ChaosObservation): string | null {
  const n = o.summary.notSent;
  if (n === null) return "unsent: the summary has no edgeload.totals.notSent";
  if (o.status === "passed" && n.share > n.bound)
    return `unsent: passed with ${(n.share * 100).toFixed(2)} % not sent by edgeload, above its ${(n.bound * 100).toFixed(2)} % bound`;
  return null;
}

/**
 * Every failure the target caused is counted as one, once: D1's 5xx, timeouts and failed
 * checks (the step checks for a 200 with the document) are each no more than the shards'
 * fetch saw, and — unless a shard was restarted, or the run given up — no fewer. A
 * restarted shard's requests in flight die with it whatever window they were sent in,
 * answered but recorded nowhere (the interrupted count covers only its open windows), so no
 * lower bound is known then. Null when that holds, else why not. A bad target answer is
 * drawn to test it (schedule.ts).
 */
function failuresCounted(o: ChaosObservation, givenUp: boolean): string | null {
  const f = o.fetched;
  const restarted = o.schedule.faults.some((x) => x.kind === "shard-restart");
  // A given-up run's D1 holds only what was written before D1 went away: no lower bound either.
  const slack = restarted || givenUp ? Number.POSITIVE_INFINITY : 0;
  const views: Array<[string, number, number]> = [
    ["5xx", o.stored.status5xx, f.status5xx],
    ["timeouts", o.stored.timeouts, f.timeouts],
    ["failed checks", o.stored.checksFailed, f.status5xx + f.garbage + f.timeouts + f.connectionErrors],
  ];
  const off = views.filter(([, stored, seen]) => stored > seen || stored < seen - slack);
  if (!off.length) return null;
  const atMost = restarted ? " (a shard restarted: at most)" : givenUp ? " (given up: at most)" : "";
  return `failures: ${off.map(([name, stored, seen]) => `${name} ${stored} in D1, ${seen} answered`).join("; ")}${atMost}`;
}
