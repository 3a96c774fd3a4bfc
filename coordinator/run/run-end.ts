/**
 * How a run ends, written by its RunCoordinator: normally (`finishRun`: teardown, the last
 * windows, the summary built once with its verdict, stored in D1 and in the object, the
 * secrets forgotten), or when its results can no longer be written (`giveUpRun`: too many
 * failed ticks in a row, tick-failure.ts; the run ends `error`, its summary readable from the
 * object). Either way the dashboards get the last events. A run that ended normally keeps
 * one alarm: its clean-up, CLEAN_UP_AFTER_MS later (run-cleanup.ts), when its objects' storage
 * goes; one that gave up keeps its storage, which holds its only summary, and no alarm.
 */
import { hideInSummary, redactSpec, secretHider } from "../../core/spec/redact.ts";
import type { ForcedStatus, Summary } from "../../core/run/summary.ts";
import { noIterationRan } from "../../core/run/script-start.ts";
import { runEndStatus } from "../../core/run/run-end-status.ts";
import type { Env } from "../../workers/env.ts";
import { updateRunStatus } from "../store/results-store.ts";
import { runTeardown } from "./phases.ts";
import { loadStats } from "./phase-metrics.ts";
import { endOf, type RunRecord } from "./run-record.ts";
import { endedRunStatements, endSummary, type SummarySources } from "./summary-of.ts";
import { unstorableEnd } from "./tick-failure.ts";
import { CLEAN_UP_AFTER_MS } from "./run-cleanup.ts";

/** What ending a run needs of its coordinator. */
export interface EndingHost {
  readonly env: Env;
  readonly storage: DurableObjectStorage;
  run(): RunRecord;
  save(run: RunRecord): void;
  sources(): SummarySources;
  showClosedWindows(run: RunRecord, nowMs: number, everyoneDone: boolean): Promise<void>;
  pushMetrics(run: RunRecord, nowMs: number): void;
  checkpoint(): void;
  /** The run's last events to its dashboards, then their streams end. */
  publishEnd(run: RunRecord, summary: Summary): void;
  /** Stops every shard. */
  abortShards(): Promise<boolean>;
}

/**
 * Ends the run: runs teardown, writes what is left, builds the summary once with its
 * verdict (`forced` when aborted or failed by abortOnFail, otherwise the thresholds'; a k6
 * teardown() that threw, aborted or ran past its timeout ends it as k6 does, phases.ts; a
 * script that called exec.test.fail() ends it failed, RunRecord.markedFailed),
 * stores it in D1, forgets the secrets, and sets the alarm of its clean-up.
 */
export async function finishRun(host: EndingHost, forced: ForcedStatus | null, note: string | null, silentReporters: number): Promise<void> {
  const teardown = await runTeardown(host.env, host.run());
  const failed = teardown?.failure;
  if (teardown) {
    host.save({
      ...host.run(),
      phases: { ...host.run().phases, teardown: teardown.view },
      // Into the totals with the save, as k6 counts teardown()'s samples (phase-metrics.ts).
      ...(teardown.cells?.length ? { phaseStats: { ...host.run().phaseStats, teardown: teardown.cells } } : {}),
      ...(failed?.byScript ? { endedByScript: true as const } : {}),
      ...(failed?.timedOut ? { scriptTimeout: failed.timedOut } : {}),
      // teardown()'s exec.test.fail(), unless an earlier call marked the run first.
      ...(teardown.markedFailed !== undefined && host.run().markedFailed === undefined ? { markedFailed: teardown.markedFailed } : {}),
    });
  }
  // A script run in which no iteration could run (its isolate never started) is an error, not a pass.
  // The load's own figures: requests setup() or teardown() sent are not an iteration that ran.
  const nothingRan = forced === null && !failed ? noIterationRan(loadStats(host.sources().totals, host.run().plan)) : null;
  const end = runEndStatus({ forced, note, teardown: failed ?? null, nothingRan, markedFailed: host.run().markedFailed });
  const run = end.markedFailed ? { ...host.run(), endedByScript: true as const } : host.run();
  const now = Date.now();
  const endMs = endOf(run, now);
  await host.showClosedWindows(run, now, true);
  // Built from the spec as given, before it is forgotten: a reason, an error sample or a
  // script's console line that quotes a secret is stored without it.
  const secrets = secretHider(run.spec);
  const reason = end.reason ?? run.abortReason;
  const ending: RunRecord = { ...run, stopping: null, endMs, abortReason: reason === null ? null : secrets.hide(reason), spec: redactSpec(run.spec) };
  const summary = hideInSummary(endSummary(ending, endMs, end.status, host.sources(), silentReporters), secrets);
  const final: RunRecord = { ...ending, status: summary.edgeload.status, verdict: summary.edgeload.verdict! };
  // The last push, with the final totals and verdict and the unredacted spec: after this
  // the outputs' headers are forgotten with the rest of the secrets.
  host.pushMetrics({ ...final, spec: run.spec }, now);
  const db = host.env.DB;
  await db.batch(endedRunStatements(db, final, endMs, summary, host.sources()));
  host.storage.kv.put("summary", summary);
  host.save(final);
  host.checkpoint();
  host.publishEnd(final, summary);
  await host.storage.setAlarm(Date.now() + CLEAN_UP_AFTER_MS);
}

/** Ends a run whose ticks keep failing as `error`; its summary stays readable from the object. */
export async function giveUpRun(host: EndingHost, run: RunRecord, message: string): Promise<void> {
  const { final, summary, endMs } = unstorableEnd(run, message, Date.now(), host.sources());
  host.storage.kv.put("summary", summary);
  host.save(final);
  host.publishEnd(final, summary);
  await host.abortShards().catch(() => {});
  const db = host.env.DB;
  await db.batch([updateRunStatus(db, run.runId, "error", { endedAt: endMs, abortReason: final.abortReason })]).catch(() => {});
  await host.storage.deleteAlarm();
}
