/**
 * Nothing left behind (issue 49): once a run is final and its results are in D1, its
 * RunCoordinator deletes its Durable Objects' storage — every shard's, every aggregator's
 * (through the tree's roots), its own last. Durable Object storage is billed per GB-month;
 * a nightly 1M/s schedule kept ~0.5 GB a run for ever.
 *
 * When: CLEAN_UP_AFTER_MS after the end, the alarm finishRun sets (run-end.ts); until then the
 * coordinator answers /metrics and late flushes as before. Again whenever the cron tick finds
 * the run's clean-up unfinished (coordinator/schedule/storage-sweep.ts), then through the
 * plan D1 keeps, as the coordinator may hold nothing by then.
 *
 * Order: the run's status view goes to D1 first (GET /v1/runs/:id answers from it once the
 * coordinator holds nothing: http/run-view.ts), then the shards and aggregators, then the
 * coordinator's own storage, then `runs.cleaned_at`. A run whose summary never reached D1
 * (it ended `error` as its ticks kept failing, tick-failure.ts) keeps its coordinator's
 * storage: its summary is nowhere else.
 */
import type { Plan } from "../../core/plan/plan.ts";
import { aggregatorName, FINAL_STATUSES, type RunView } from "../../core/run/protocol.ts";
import type { Env } from "../../workers/env.ts";
import { cleanable, markCleaned, planOfJson, storedEnd, storeFinalView } from "../store/run-cleanup-rows.ts";
import type { RunRecord } from "./run-record.ts";
import type { RunObjects } from "./run-shards.ts";

/**
 * How long a final run's coordinator keeps its storage: as long as /metrics lists an ended
 * run (http/metrics-api.ts ENDED_RUN_GRACE_MS; run-cleanup.test.ts pins it), whose
 * figures come from the coordinator's totals.
 */
export const CLEAN_UP_AFTER_MS = 5 * 60_000;

/** What a clean-up did: `cleaned` once nothing of the run is left in any of its objects. */
export type CleanUpResult = { readonly cleaned: true } | { readonly cleaned: false; readonly reason: string };

/** What cleaning up needs of the coordinator. */
export interface CleaningHost {
  readonly env: Pick<Env, "DB">;
  readonly objects: RunObjects;
  readonly storage: DurableObjectStorage;
  /** The run it holds; null once it holds none. */
  run(): RunRecord | null;
  /** The run's status view now (what status() answers). */
  view(): Promise<RunView | null>;
  /** Its storage is gone: forget what is mirrored of it in memory. */
  forget(): void;
}

/**
 * Cleans up run `runId` (see the file's header); refuses while the run goes or its summary is
 * not in D1. A failure (D1 unreachable, …) is an answer too, not an exception: whoever asked
 * — the coordinator's own alarm, the cron tick — leaves the run to the next sweep.
 */
export async function cleanUpRun(host: CleaningHost, runId: string, nowMs: number): Promise<CleanUpResult> {
  try {
    return await cleanUpOnce(host, runId, nowMs);
  } catch (error) {
    console.error(`run ${runId}: clean-up failed: ${String(error)}`);
    return { cleaned: false, reason: `the clean-up failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function cleanUpOnce(host: CleaningHost, runId: string, nowMs: number): Promise<CleanUpResult> {
  const run = host.run();
  if (run && run.runId !== runId) throw new Error(`this coordinator holds run ${run.runId}, not ${runId}`);
  if (run && !FINAL_STATUSES.includes(run.status)) return { cleaned: false, reason: `the run is ${run.status}` };
  const db = host.env.DB;
  const end = await storedEnd(db, runId);
  if (!cleanable(end)) return { cleaned: false, reason: "its summary is not in D1: its coordinator keeps it" };
  const view = run ? await host.view() : null;
  if (view) await storeFinalView(db, runId, view);
  const childrenCleaned = await cleanUpObjects(host.objects, runId, run?.plan ?? planOfJson(end.planJson));
  await host.storage.deleteAlarm();
  await host.storage.deleteAll();
  host.forget();
  if (!childrenCleaned) return { cleaned: false, reason: "a shard or aggregator did not answer: the cron tick asks again" };
  await markCleaned(db, runId, nowMs);
  return { cleaned: true };
}

/**
 * Asks every shard of a run (in a run with a tree, every region root, which passes it down)
 * to delete its storage; true when every one did.
 */
export async function cleanUpObjects(objects: RunObjects, runId: string, plan: Pick<Plan, "shards" | "tree">): Promise<boolean> {
  const tree = plan.tree;
  const answers = await Promise.allSettled(
    tree
      ? tree.roots.map((index) =>
          objects.aggregators.get(objects.aggregators.idFromName(aggregatorName(runId, index))).cleanUp({ runId, aggregators: tree.aggregators, index }),
        )
      : plan.shards.map((s) => objects.shards.get(objects.shards.idFromName(`${runId}/${s.index}`)).cleanUp(runId)),
  );
  for (const a of answers) if (a.status === "rejected") console.warn(`run ${runId}: an object did not clean up: ${String(a.reason)}`);
  return answers.every((a) => a.status === "fulfilled" && a.value.cleaned);
}
