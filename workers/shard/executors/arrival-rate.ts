/**
 * The open model (k6's `constant-arrival-rate` and `ramping-arrival-rate`): iterations
 * start when the pacer says they are due, never earlier, and one the in-flight cap cannot
 * take is counted dropped instead of sliding the schedule (the host's launch()).
 */
import { dueBatch, type ShardShare } from "../../../core/schedule/pacer.ts";
import type { SliceEnd, SliceResult } from "../engine-types.ts";
import { type ExecutorHost, tickEnd } from "./host.ts";

/**
 * Runs the share from `cursor` until it is exhausted, the deadline passes, stop() is
 * called, or `budget` iterations were started (then "handoff": the caller continues in a
 * fresh invocation). Waits for in-flight requests, then hands out every window.
 */
export async function runArrivalRate(host: ExecutorHost, share: ShardShare, cursor: number, budget: number): Promise<SliceResult> {
  const a = host.a;
  host.setCursor(cursor);
  let started = 0;
  let end: SliceEnd = "finished";
  for (;;) {
    const now = host.clock.now();
    const ended = tickEnd(host, now);
    if (ended) {
      end = ended;
      break;
    }
    const batch = dueBatch(share, cursor, now - a.t0Ms, budget - started);
    for (let k = batch.from; k < batch.to; k++) host.launch(k, now);
    started += batch.to - batch.from;
    cursor = batch.to;
    host.setCursor(cursor);
    if (cursor >= share.total) {
      end = "finished";
      break;
    }
    if (started >= budget) {
      end = "handoff";
      break;
    }
    const untilWindowEnd = host.untilNextClose(now);
    const untilTimeout = host.nextTimeoutMs() - now;
    await host.sleep(Math.min(batch.waitMs, untilWindowEnd, untilTimeout, a.deadlineMs - now));
    host.sweepTimeouts(host.clock.now());
  }
  if (end === "deadline" && cursor < share.total) {
    // Never started by the deadline (a first alarm that came too late, a shard too far
    // behind): dropped, so the schedule is still accounted for (engine.test.ts, chaos tree seed 1).
    host.dropUnstarted(share.total - cursor, host.clock.now());
    cursor = share.total;
    host.setCursor(cursor);
  }
  host.sleepsEnded();
  await host.drain();
  // Hand out everything, including the current partial window: after a handoff the
  // next invocation reports the rest of that second as another part of the window.
  host.closeAll();
  return { end, cursor, sent: started, peakInFlight: host.peakInFlight() };
}
