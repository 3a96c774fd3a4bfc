/**
 * How a RunCoordinator stops its run before its end (an abort through the API, a failed
 * abortOnFail threshold, a k6 script's exec.test.abort()): `finishing` while the shards flush
 * what they measured, then the end (run-end.ts) at the first tick that finds them all done or
 * their grace over.
 */
import { secretHider } from "../../core/spec/redact.ts";
import type { Env } from "../../workers/env.ts";
import { TICK_MS } from "../merge/ticks.ts";
import { updateRunStatus } from "../store/results-store.ts";
import type { RunRecord } from "./run-record.ts";

/** What stopping a run needs of its coordinator. */
export interface StoppingHost {
  readonly env: Env;
  readonly storage: DurableObjectStorage;
  run(): RunRecord;
  save(run: RunRecord): void;
  /** Sends the stop to the shards when due (run-shards.ts ShardStopper). */
  signalStop(nowMs: number): void;
}

/** Records the stop (its reason with the run's secrets hidden), tells the shards and keeps ticking. */
export async function stopRun(host: StoppingHost, status: "aborted" | "failed", given: string, byScript: boolean): Promise<void> {
  const now = Date.now();
  // Stored and shown: a script's abort message may quote a token it was given.
  const reason = secretHider(host.run().spec).hide(given);
  host.save({
    ...host.run(),
    status: "finishing",
    stopping: status,
    abortReason: reason,
    endMs: now,
    ...(byScript ? { endedByScript: true as const } : {}),
  });
  const runId = host.run().runId;
  // Recorded above; a D1 refusing this row does not refuse the stop (the end writes the final status).
  await host.env.DB.batch([updateRunStatus(host.env.DB, runId, "finishing", { abortReason: reason })]).catch((error: unknown) => {
    console.error(`run ${runId}: finishing not written to D1: ${String(error)}`);
  });
  host.signalStop(now);
  // Keep ticking: the run ends at the first tick that finds every shard done (or the grace over).
  await host.storage.setAlarm(now + TICK_MS);
}
