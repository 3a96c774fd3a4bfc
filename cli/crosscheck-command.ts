/**
 * `edgeload crosscheck`: an edge run held against k6 measuring the same load.
 *
 *   edgeload crosscheck <run> --k6 summary.json    import a k6 summary (any format core/formats/k6-summary.ts reads) and compare
 *   edgeload crosscheck <run> --run-k6             run local k6 with the run's target, load and seed right after the run ends, then compare
 *   edgeload crosscheck <run> --run-k6 --floor     and then workerd's own paced fetch loop: whose each disagreeing latency is
 *   edgeload crosscheck <run>                      the comparisons stored for the run
 *   edgeload crosscheck --abba spec.json           edgeload, k6, k6, edgeload: the tools apart from the target's drift
 *
 * With --run-k6 a custom-steps run replays through k6-scripts/http.js and a scenario run
 * through the scenario's own script, with the same arrival schedule (the run's stages, so a
 * shortened preset stays shortened), in-flight cap and timeout, and for scenarios the same
 * seed set through a signed TOKEN_URL. Secrets are redacted from stored specs: client and
 * admin secrets come from flags, or from `edgeload dev` when the run hit the local target.
 * Exit code 0 when every row agrees, 99 when one does not (as `edgeload compare`), 75
 * when nothing (or not the load itself) could be compared, or an import does not parse.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Latency } from "../core/results/crosscheck.ts";
import { renderCrosscheck } from "../core/results/crosscheck-text.ts";
import { attributeResiduals, renderAttributions, type ResidualAttribution } from "../core/results/crosscheck-attribution.ts";
import type { K6ImportView } from "../core/formats/k6-summary.ts";
import { combineVerdicts, inconclusive, verdictExitCode, type Verdict } from "../core/run/verdict.ts";
import { FINAL_STATUSES, type RunStatus } from "../core/run/protocol.ts";
import type { EdgeloadClient } from "./client.ts";
import { CliError, connect, EXIT, readJsonFile } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { CROSSCHECK_COMMAND } from "./tables/analysis-tables.ts";
import { k6Invocation, runK6, type StoredSpec } from "./k6-replay.ts";
import { floorLoad, measureFloor, type FloorLoad } from "./floor-replay.ts";

export async function crosscheckCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(CROSSCHECK_COMMAND, args);
  const runId = positionals[0];
  if (!runId) throw new CliError("a run id is required (edgeload crosscheck --help)", EXIT.invalidConfig);
  if (values.format !== "table" && values.format !== "json") throw new CliError(`--format: "${values.format}" must be table or json`, EXIT.invalidConfig);
  if (values.k6 && values["run-k6"]) throw new CliError("give either --k6 FILE or --run-k6, not both", EXIT.invalidConfig);
  if (values.floor && (values.abba || !(values.k6 || values["run-k6"])))
    throw new CliError("--floor goes with --run-k6 or --k6: it tells whose a comparison's residual is", EXIT.invalidConfig);
  const client = await connect(values);

  if (values.abba) {
    if (values.k6 || values["run-k6"])
      throw new CliError("--abba runs its own edgeload and k6 runs: give it a spec file, without --k6 or --run-k6", EXIT.invalidConfig);
    const dev = await (await import("./dev-file.ts")).readDevFile();
    const v = values as unknown as Record<string, string | undefined>;
    return (await import("./crosscheck-abba-command.ts")).crosscheckAbba(
      client,
      runId,
      {
        ...(v.seed ? { tokenUrl: (await client.seedUrl(v.seed, { expiresIn: "1h" })).url } : {}),
        clientId: v["client-id"] ?? dev?.targetClient.clientId,
        clientSecret: v["client-secret"] ?? dev?.targetClient.clientSecret,
        adminSecret: v["admin-secret"] ?? dev?.targetAdminSecret,
        redirectUri: v["redirect-uri"] ?? dev?.targetClient.redirectUri,
      },
      values.format as "table" | "json",
      !values["no-preflight"],
    );
  }

  if (!values.k6 && !values["run-k6"]) {
    const { imports } = await client.crosschecks(runId);
    if (values.format === "json") console.log(JSON.stringify(imports, null, 2));
    else if (imports.length === 0) console.log(`no k6 summaries imported for run ${runId} (edgeload crosscheck ${runId} --k6 summary.json)`);
    else for (const i of imports) console.log(renderImport(i) + "\n");
    return verdictExitCode(importsVerdict(runId, imports));
  }

  // --floor is checked before anything runs: a run the floor cannot replay is refused first.
  const floor = values.floor ? floorLoad(runId, (await storedRun(client, runId)).spec) : null;
  const summaryPath = values.k6 ?? (await runK6AfterRun(client, runId, values));
  const view = await client.crosscheck(runId, await readSummaryFile(summaryPath));
  if (!floor) {
    console.log(values.format === "json" ? JSON.stringify(view, null, 2) : renderImport(view));
    return verdictExitCode(importVerdict(view));
  }
  if (values.format !== "json") console.log(`running workerd's own paced fetch loop (the floor) at ${floor.ratePerS}/s against ${floor.url}…`);
  const floorLatency = await measureFloor(floor);
  const attributions = view.comparison ? attributeResiduals(view.comparison, floorLatency) : [];
  if (values.format === "json") console.log(JSON.stringify({ ...view, floor: { ...floor, latency: floorLatency }, attributions }, null, 2));
  else console.log(`${renderImport(view)}\n\n${renderFloor(floor, floorLatency, attributions)}`);
  return verdictExitCode(importVerdict(view));
}

/**
 * One import's verdict: its comparison's, or inconclusive when it could not be compared
 * (a summary that does not parse, or no longer does) — never a pass.
 */
export function importVerdict(view: K6ImportView): Verdict {
  if (view.comparison?.outcome) return view.comparison.outcome;
  const why = (view.problems ?? []).map((p) => `${p.field}: ${p.detail}`).join("; ") || "no comparison";
  return inconclusive(`k6 import ${view.id} cannot be compared: ${why}`);
}

/** The stored imports' verdict together: none at all is nothing to compare. */
export function importsVerdict(runId: string, imports: readonly K6ImportView[]): Verdict {
  return combineVerdicts(imports.map(importVerdict), `no k6 summaries imported for run ${runId}`);
}

/** The floor's reading, and whose each disagreeing latency row is. */
function renderFloor(load: FloorLoad, latency: Latency, attributions: readonly ResidualAttribution[]): string {
  const ms = (v: number | null) => (v === null ? "-" : `${v}`);
  return [
    `floor: workerd's own paced fetch loop in a Durable Object, ${load.requests} GETs at ${load.ratePerS}/s: p50 ${ms(latency.p50)} ms, p90 ${ms(latency.p90)} ms, p95 ${ms(latency.p95)} ms, p99 ${ms(latency.p99)} ms, max ${ms(latency.max)} ms`,
    ...(attributions.length ? renderAttributions(attributions).map((line) => `  ${line}`) : ["  nothing to attribute: no latency row disagrees"]),
  ].join("\n");
}

/** The run's status and stored spec, or a CliError when there is no such run. */
async function storedRun(client: EdgeloadClient, runId: string): Promise<{ status: RunStatus; spec: StoredSpec }> {
  const record = await client.runRecord(runId);
  if (!record) throw new CliError(`run ${runId} does not exist`);
  return { status: record.status, spec: record.spec as unknown as StoredSpec };
}

function renderImport(view: K6ImportView): string {
  const head = `crosscheck of run ${view.runId} with k6 (${view.format}, import ${view.id}, ${view.importedAt})`;
  if (!view.comparison)
    return `${head}\n  INCONCLUSIVE (exit 75): cannot be compared: ${(view.problems ?? []).map((p) => `${p.field}: ${p.detail}`).join("; ")}`;
  return `${head}\n\n${renderCrosscheck(view.comparison)}`;
}

function readSummaryFile(path: string): Promise<unknown> {
  return readJsonFile(path, "k6 summary", "write it with --summary-export or handleSummary");
}

/** --run-k6: waits for the run to end, then replays it with local k6 against the same target. */
async function runK6AfterRun(client: EdgeloadClient, runId: string, values: Record<string, unknown>): Promise<string> {
  const v = values as Record<string, string | undefined>;
  const { status, spec } = await storedRun(client, runId);
  if (!FINAL_STATUSES.includes(status)) {
    console.log(`waiting for run ${runId} to end…`);
    await client.follow(runId, () => {});
  }
  let tokenUrl: string | undefined;
  if (spec.scenario?.seed || v.seed) {
    if (spec.scenario?.name === "refresh" && !v.seed) {
      throw new CliError(
        `the edge run rotated the refresh-token families of seed ${spec.scenario.seed}: give --seed with a fresh refresh-token set for k6`,
        EXIT.invalidConfig,
      );
    }
    tokenUrl = (await client.seedUrl(v.seed ?? spec.scenario!.seed!, { expiresIn: "1h" })).url;
  }
  // Against the local target, `edgeload dev` knows the client and admin secrets.
  const dev = await (await import("./dev-file.ts")).readDevFile();
  const local = dev && spec.target === dev.targetUrl ? dev : null;
  const invocation = k6Invocation(spec, {
    ...(tokenUrl ? { tokenUrl } : {}),
    clientId: v["client-id"] ?? local?.targetClient.clientId,
    clientSecret: v["client-secret"] ?? local?.targetClient.clientSecret,
    adminSecret: v["admin-secret"] ?? local?.targetAdminSecret,
    redirectUri: v["redirect-uri"] ?? local?.targetClient.redirectUri,
  });
  const { findK6 } = await import("./k6-binary.ts");
  const out = v["k6-out"] ?? join(await mkdtemp(join(tmpdir(), "edgeload-k6-")), "summary.json");
  console.log(`running k6 (${invocation.script}) against ${spec.target}…`);
  await runK6(findK6(), invocation, out);
  console.log(`k6 summary written to ${out}`);
  return out;
}
