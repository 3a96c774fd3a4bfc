/**
 * The R2 objects a run leaves (issue 49), swept by the cron tick once the run is past the
 * results retention (RESULTS_RETENTION_DAYS, as its per-second rows):
 *
 * - a k6/browser script's screenshots (`screenshots/<run>/…`, workers/shard/browser-host.ts
 *   screenshotKey) are results, kept as long as the run's per-second figures and then deleted;
 * - its script bundle (`scripts/<sha256>.json`, content-addressed, so shared by every run of the
 *   same script) is deleted with it unless a run of the retention period or a schedule names it:
 *   `edgeload run` uploads its bundle before every run, and a schedule's turns run the bundle
 *   its spec names.
 * Seed sets are the user's own uploads (PUT /v1/seeds/:name) and stay until deleted.
 *
 * A bounded slice a tick: ARTIFACT_RUNS_PER_TICK runs, each one listing of its screenshots (a
 * run with more than a page of them finishes over the next ticks); a run is marked swept
 * (`runs.artifacts_swept_at`) once nothing of it is left. R2 bills each listing as a class A
 * operation, so a run without a script, which made no R2 object, is marked without one.
 */
import type { RunSpec } from "../../core/spec/types.ts";
import { scriptObjectKey } from "../../core/spec/script-schema.ts";
import type { Env } from "../../workers/env.ts";
import { bundleInUse, markSwept, runsToSweep, type RunToSweep } from "../store/retained-rows.ts";

/** Runs whose R2 objects are looked at per tick. */
export const ARTIFACT_RUNS_PER_TICK = 3;
/** Keys per R2 listing (its most) and per deletion. */
const KEYS_PER_PAGE = 1_000;

/** Where a run's screenshots are: the prefix of every key screenshotKey gives it. */
export const screenshotsPrefix = (runId: string) => `screenshots/${runId}/`;

/** Deletes the R2 objects of the oldest runs ended before `cutoffMs` (see the header); how many runs are done. */
export async function sweepRunArtifacts(env: Pick<Env, "DB" | "SEEDS">, cutoffMs: number, nowMs: number): Promise<number> {
  let swept = 0;
  for (const run of await runsToSweep(env.DB, cutoffMs, ARTIFACT_RUNS_PER_TICK)) {
    if (!(await sweepRun(env, run, cutoffMs))) continue;
    await markSwept(env.DB, run.id, nowMs);
    swept++;
  }
  return swept;
}

/** One run's screenshots (a page of them) and its bundles no one wants; true when nothing of it is left. */
async function sweepRun(env: Pick<Env, "DB" | "SEEDS">, run: RunToSweep, cutoffMs: number): Promise<boolean> {
  const bundles = bundlesOf(run.specJson);
  if (!bundles.length) return true;
  const page = await env.SEEDS.list({ prefix: screenshotsPrefix(run.id), limit: KEYS_PER_PAGE });
  if (page.objects.length) await env.SEEDS.delete(page.objects.map((o) => o.key));
  if (page.truncated) return false;
  for (const bundle of bundles) if (!(await bundleInUse(env.DB, bundle, cutoffMs))) await env.SEEDS.delete(scriptObjectKey(bundle));
  return true;
}

/** The script bundles a stored spec names: its own, and its named scenarios'. */
export function bundlesOf(specJson: string): string[] {
  const spec = JSON.parse(specJson) as Pick<RunSpec, "script" | "scenarios">;
  const named = [spec.script?.bundle, ...(spec.scenarios ?? []).map((s) => s.spec.script?.bundle)];
  return [...new Set(named.filter((b): b is string => typeof b === "string"))];
}
