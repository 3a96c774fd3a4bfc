/**
 * What one cron tick does for one schedule: nothing (not due, or paused), start a run, or
 * skip the turn because the schedule's previous run is still going — and how many turns
 * were missed (an outage, a paused Worker) since the schedule was last looked at.
 *
 * Missed turns are reported, never piled up: of every turn due since the last look, only
 * the latest runs, and only if it is at most `graceMs` old; the others are counted. Pure:
 * the coordinator's `scheduled` handler passes the tick's time in.
 */
import { nextAfter, type Cron } from "./cron.ts";

/** How late a turn may still start: a tick every minute is at most a minute late, plus slack. */
export const TURN_GRACE_MS = 5 * 60_000;

/** Turns counted at most when reporting an outage (a minutely cron over a week is 10,080). */
const MAX_COUNTED = 100_000;

export interface TurnInput {
  readonly cron: Cron;
  /** The turn the schedule waits for (epoch ms); null when its expression has no next turn. */
  readonly nextDueMs: number | null;
  readonly nowMs: number;
  readonly paused: boolean;
  /** Whether the schedule's last run has not ended yet (nor been judged by the watchdog, watchdog.ts). */
  readonly previousRunActive: boolean;
  /** That run, named in a skipped turn's reason. */
  readonly previousRunId?: string | null;
  readonly graceMs?: number;
}

export type TurnDecision =
  | { readonly kind: "idle"; readonly nextDueMs: number | null }
  | {
      readonly kind: "start" | "skip" | "missed";
      /** The turn this tick takes (start, skip) or the latest missed one (missed). */
      readonly dueMs: number;
      /** Earlier turns due since the last look, not run. */
      readonly missed: number;
      readonly nextDueMs: number | null;
      readonly reason?: string;
    };

/**
 * The decision for one schedule at `nowMs`.
 *
 * @example
 * decideTurn({ cron, nextDueMs: 600_000, nowMs: 610_000, paused: false, previousRunActive: false })
 * // { kind: "start", dueMs: 600_000, missed: 0, nextDueMs: 660_000 }
 */
export function decideTurn(input: TurnInput): TurnDecision {
  const { cron, nextDueMs, nowMs } = input;
  if (nextDueMs === null || nextDueMs > nowMs) return { kind: "idle", nextDueMs };
  // Every turn from nextDueMs up to now: the latest is this tick's, the others were missed.
  let latest = nextDueMs;
  let earlier = 0;
  for (let t = nextAfter(cron, latest); t !== null && t <= nowMs && earlier < MAX_COUNTED; t = nextAfter(cron, t)) {
    latest = t;
    earlier++;
  }
  const next = nextAfter(cron, nowMs);
  // A paused schedule lets its turns pass without counting them as missed.
  if (input.paused) return { kind: "idle", nextDueMs: next };
  if (nowMs - latest > (input.graceMs ?? TURN_GRACE_MS))
    return {
      kind: "missed",
      dueMs: latest,
      missed: earlier + 1,
      nextDueMs: next,
      reason: `the turn of ${new Date(latest).toISOString()} is too late to start`,
    };
  if (input.previousRunActive) {
    const run = input.previousRunId ? ` ${input.previousRunId}` : "";
    return { kind: "skip", dueMs: latest, missed: earlier, nextDueMs: next, reason: `the previous run${run} of this schedule is still going` };
  }
  return { kind: "start", dueMs: latest, missed: earlier, nextDueMs: next };
}
