/**
 * The fault table of `npm run bench -- faults`: one row per fault, each a run at a steady
 * rate with a known total, accounted three ways so that a loss or a double count cannot
 * hide in one place:
 *
 *  1. the schedule: every iteration it holds is either sent or dropped (a crash's missed
 *     arrivals are counted as dropped, never replayed): `sent + dropped` against the total;
 *  2. the target: what it received (its request ledger, or the fault server's own count)
 *     against what the run says it sent, less what never reached it (connection errors)
 *     or may not have (timeouts);
 *  3. the two stores: the summary the coordinator merged against the rows in D1.
 *
 * Pure: the rows are measured elsewhere (in workerd and on the local stack) and end here.
 */
import { markdownTable } from "../markdown-table.ts";

export interface FaultObservation {
  readonly fault: string;
  /** Iterations the schedule holds for the whole run. */
  readonly scheduled: number;
  /** The run was stopped early (abort, Ctrl-C, error): fewer than `scheduled` may run. */
  readonly stoppedEarly: boolean;
  readonly outcome: string;
  /** What the documentation says the outcome is. */
  readonly expectedOutcome: string;
  /** From the merged results the run reports (D1 windows, or the summary when D1 failed). */
  readonly sent: number;
  readonly dropped: number;
  readonly connectionErrors: number;
  readonly timeouts: number;
  /** Requests the target counted for this run; null when nothing counted them. */
  readonly received: number | null;
  /** Completed requests in the summary and in D1; null when D1 was meant to hold none. */
  readonly summaryRequests: number;
  readonly storedRequests: number | null;
  /** Time to recover (fault rows) or for every shard to stop (abort rows), ms. */
  readonly timeMs: number | null;
  readonly timeLabel: "recover" | "stop";
  readonly note?: string;
  /**
   * A loss the fault makes unavoidable, with its reason in `note`: requests a crashed
   * shard had sent in its open windows reached the target, but their results died with
   * it; it counts each of those iterations interrupted when it resumes (never as sent), so
   * the bound is the run's interrupted count (docs/architecture.md, "Shards"). The row is
   * ok up to this bound.
   */
  readonly lossBound?: number;
}

export interface FaultRow extends FaultObservation {
  /** Iterations accounted for (sent + dropped). */
  readonly counted: number;
  readonly lost: number;
  readonly doubleCounted: number;
  /** 0 lost, 0 double counted, the documented outcome, and (abort rows) stopped < 5 s. */
  readonly ok: boolean;
}

/** Every shard must have stopped this soon after an abort. */
export const STOP_WITHIN_MS = 5_000;

export function accountFault(o: FaultObservation): FaultRow {
  const counted = o.sent + o.dropped;
  let lost = 0;
  let doubleCounted = 0;
  // 1. The schedule: a complete run accounts for every iteration; a stopped one for no more.
  if (!o.stoppedEarly) lost += Math.max(0, o.scheduled - counted);
  doubleCounted += Math.max(0, counted - o.scheduled);
  // 2. The target: received but not counted is a lost measurement; counted as sent but
  //    never received, beyond what could not arrive, is a request counted twice.
  if (o.received !== null) {
    lost += Math.max(0, o.received - o.sent);
    doubleCounted += Math.max(0, o.sent - o.received - o.connectionErrors - o.timeouts);
  }
  // 3. The stores: the summary and D1 hold the same completed requests.
  if (o.storedRequests !== null) {
    lost += Math.max(0, o.summaryRequests - o.storedRequests);
    doubleCounted += Math.max(0, o.storedRequests - o.summaryRequests);
  }
  const stoppedInTime = o.timeLabel !== "stop" || (o.timeMs !== null && o.timeMs < STOP_WITHIN_MS);
  return { ...o, counted, lost, doubleCounted, ok: lost <= (o.lossBound ?? 0) && doubleCounted === 0 && o.outcome === o.expectedOutcome && stoppedInTime };
}

/** "ends +2.1 s": the run ended that long after its schedule; "stops 0.3 s": every shard stopped that long after the abort. */
function seconds(ms: number | null, label: FaultRow["timeLabel"]): string {
  if (ms === null) return label === "stop" ? "not stopped" : "—";
  return label === "stop" ? `stops ${(ms / 1000).toFixed(1)} s` : `ends +${(ms / 1000).toFixed(1)} s`;
}

/** The table as printed by the benchmark and pasted into the README (Markdown). */
export function faultTable(rows: readonly FaultRow[]): string {
  const header = ["fault", "expected", "counted", "lost", "double-counted", "outcome", "time", ""];
  const lines = rows.map((r) => [
    r.fault,
    r.stoppedEarly ? `≤ ${r.scheduled}` : String(r.scheduled),
    String(r.counted),
    r.lossBound ? `${r.lost} (≤ ${r.lossBound})` : String(r.lost),
    String(r.doubleCounted),
    r.outcome === r.expectedOutcome ? r.outcome : `${r.outcome} (documented: ${r.expectedOutcome})`,
    seconds(r.timeMs, r.timeLabel),
    r.ok ? "ok" : "NOT OK",
  ]);
  const notes = rows.filter((r) => r.note).map((r) => `- ${r.fault}: ${r.note}`);
  // The fault and the outcome are words: left-aligned.
  return [markdownTable(header, lines, new Set([0, 5])), ...(notes.length ? ["", ...notes] : [])].join("\n");
}
