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
  readonly stored: { readonly sent: number; readonly dropped: number; readonly requests: number; readonly connectionErrors: number; readonly timeouts: number };
  /** From the run's summary (GET /v1/runs/:id/summary). */
  readonly summary: { readonly sent: number; readonly requests: number };
  /** D1's `shards` rows of the run: how many, and their requests. */
  readonly shardRows: { readonly count: number; readonly requests: number };
  /** Shards the run's status view says are done. */
  readonly shardsDone: number;
  /** From the later of the run's scheduled end and its last fault to its final status. */
  readonly endedAfterMs: number;
  /** From the abort to every shard stopped (null: no abort, or not stopped in 30 s). */
  readonly stoppedAfterMs: number | null;
  /** Where the run's secrets were found: log lines, D1 tables, API answers. */
  readonly secretsFound: readonly string[];
}

export const INVARIANTS = ["agree", "once", "ends", "verdict", "secrets"] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Judgement {
  readonly held: Readonly<Record<Invariant, boolean>>;
  /** Why each invariant that broke did, in words. */
  readonly why: readonly string[];
  readonly lost: number;
  readonly lossBound: number;
  readonly doubleCounted: number;
}

export const shardCount = (schedule: ChaosSchedule) => (schedule.shape === "tree" ? 6 : 2);
export const scheduledIterations = () => (CHAOS_RUN.ratePerS * CHAOS_RUN.durationMs) / 1000;

/**
 * The loss a schedule makes unavoidable: a restarted shard's results in its open windows
 * died with it though its requests reached the target. A window closes up to
 * CLOSE_SPREAD_MS (600 ms, workers/shard/shard-windows.ts) into the next second, so two can
 * be open: up to 1.6 s of the shard's share per restart. (The shard's cursor is stored when
 * a window closes, past what it sent in the next second by then: those iterations are in
 * neither its windows nor what it counts dropped on resuming, so the schedule's side of the
 * count shows the same loss.)
 */
export function lossBoundOf(schedule: ChaosSchedule): number {
  const restarts = schedule.faults.filter((f) => f.kind === "shard-restart").length;
  return Math.ceil((restarts * 1.6 * CHAOS_RUN.ratePerS) / shardCount(schedule));
}

export function judge(o: ChaosObservation): Judgement {
  const why: string[] = [];
  const shards = shardCount(o.schedule);
  const scheduled = scheduledIterations();
  const aborted = o.schedule.faults.some((f) => f.kind === "abort");
  const lossBound = lossBoundOf(o.schedule);
  const counted = o.stored.sent + o.stored.dropped;
  // Lost: what the schedule held and no one counted, what the target received and D1 lacks,
  // what the summary has and a store lacks. Views of one loss (a request whose result died
  // with its shard is missing from the schedule's count and from D1's alike): the largest.
  const lost = Math.max(
    aborted ? 0 : scheduled - counted,
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
  const agree = lost <= lossBound && o.shardRows.count === shards;
  if (!agree)
    why.push(
      `agree: lost ${lost} (bound ${lossBound}); scheduled ${scheduled}, counted ${counted}, received ${o.received}, D1 sent ${o.stored.sent} requests ${o.stored.requests}, summary sent ${o.summary.sent} requests ${o.summary.requests}, shard rows ${o.shardRows.count}/${shards} with ${o.shardRows.requests}`,
    );
  const once = doubleCounted === 0;
  if (!once) why.push(`once: ${doubleCounted} counted twice`);
  const stopped = !aborted || (o.stoppedAfterMs !== null && o.stoppedAfterMs < STOP_WITHIN_MS);
  const ends = o.endedAfterMs <= END_WITHIN_MS && stopped;
  if (!ends)
    why.push(
      `ends: final ${(o.endedAfterMs / 1000).toFixed(1)} s after the schedule (≤ ${END_WITHIN_MS / 1000} s); shards stopped ${o.stoppedAfterMs ?? "never"} ms after the abort`,
    );
  // Data missing: a shard that never reported, or more lost than the faults explain. Then never `passed`.
  const missing = o.shardsDone < shards || o.shardRows.count < shards || lost > lossBound;
  const expected = aborted ? ["aborted"] : missing ? ["inconclusive"] : ["passed"];
  const verdict = expected.includes(o.status);
  if (!verdict) why.push(`verdict: ${o.status}, expected ${expected.join(" or ")} (shards done ${o.shardsDone}/${shards}${missing ? ", data missing" : ""})`);
  const secrets = o.secretsFound.length === 0;
  if (!secrets) why.push(`secrets: found in ${o.secretsFound.join(", ")}`);
  return { held: { agree, once, ends, verdict, secrets }, why, lost, lossBound, doubleCounted };
}
