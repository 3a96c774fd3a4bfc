/**
 * `edgeload crosscheck --abba <spec.json>`: edgeload, k6, k6, edgeload on the same spec,
 * so that the target's own drift (a cache that warms, a neighbour that gets busy) cancels
 * out of the tools' difference instead of deciding which one looks faster, and the two
 * runs of each tool read how far the target moved by itself (core/results/crosscheck-abba.ts).
 *
 * Each pair is also stored as an ordinary crosscheck of its edge run (GET
 * /v1/runs/:id/crosscheck). Exit 0 when the tools agree, 99 when they differ beyond the
 * target's own noise, 75 (inconclusive) when the target moved too much to tell or nothing
 * could be compared.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { abbaCrosscheck, renderAbba } from "../core/results/crosscheck-abba.ts";
import { edgeFigures } from "../core/results/crosscheck.ts";
import { parseK6Summary } from "../core/formats/k6-summary.ts";
import { verdictExitCode } from "../core/run/verdict.ts";
import type { EdgeloadClient } from "./client.ts";
import { CliError, readJsonFile } from "./connection.ts";
import { k6Invocation, runK6, type ReplayInputs, type StoredSpec } from "./k6-replay.ts";

export async function crosscheckAbba(
  client: EdgeloadClient,
  specPath: string,
  inputs: ReplayInputs,
  format: "table" | "json",
  probeFirst = true,
): Promise<number> {
  const spec = await readJsonFile(specPath, "run spec");
  // A built-in scenario's provider set up so that the runs cannot pass is refused before any
  // load, as `edgeload run` refuses it (cli/preflight.ts): four runs would measure a broken setup.
  if (probeFirst) await (await import("./preflight.ts")).preflight(client, spec);
  const { findK6 } = await import("./k6-binary.ts");
  const k6 = findK6();
  const dir = await mkdtemp(join(tmpdir(), "edgeload-abba-"));

  const edgeRun = async (label: string) => {
    const created = await client.createRun(spec);
    console.log(`${label}: edgeload run ${created.id}…`);
    const view = await client.follow(created.id, () => {});
    if (view.status === "error" || view.status === "aborted")
      throw new CliError(`${label}: run ${created.id} ended ${view.status}; the crosscheck needs both edgeload runs complete`);
    return created.id;
  };
  const k6Run = async (label: string, stored: StoredSpec) => {
    const out = join(dir, `${label}.json`);
    console.log(`${label}: k6 (${k6Invocation(stored, inputs).script})…`);
    await runK6(k6, k6Invocation(stored, inputs), out, { quiet: true });
    const parsed = parseK6Summary(await readJsonFile(out, "k6 summary"));
    if (!parsed.ok) throw new CliError(`${label}: k6's summary could not be read: ${parsed.problems.map((p) => p.detail).join("; ")}`);
    return { out, figures: parsed.figures };
  };

  const a1 = await edgeRun("A1");
  const record = await client.runRecord(a1);
  if (!record) throw new CliError(`run ${a1} disappeared`);
  const stored = record.spec as unknown as StoredSpec;
  const b1 = await k6Run("B1", stored);
  const b2 = await k6Run("B2", stored);
  const a2 = await edgeRun("A2");

  // Stored as ordinary pairs too, so `edgeload crosscheck <run>` lists them.
  await client.crosscheck(a1, await readJsonFile(b1.out, "k6 summary"));
  await client.crosscheck(a2, await readJsonFile(b2.out, "k6 summary"));
  const result = abbaCrosscheck({
    a1: edgeFigures(await client.summary(a1)),
    b1: b1.figures,
    b2: b2.figures,
    a2: edgeFigures(await client.summary(a2)),
  });
  if (format === "json") console.log(JSON.stringify({ runs: { a1, a2 }, ...result }, null, 2));
  else console.log(`\nABBA crosscheck: edgeload ${a1}, k6, k6, edgeload ${a2}\n\n${renderAbba(result)}`);
  return verdictExitCode(result.outcome);
}
