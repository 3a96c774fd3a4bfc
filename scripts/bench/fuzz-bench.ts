/**
 * 6. fuzz: every parser at the edge (test/support/bad-input-surfaces.ts) against 10,000 generated
 *    bad inputs each: none may throw, every problem must name a field.
 *
 * Why: these parsers take what users and the API send (specs, thresholds, templates, seed
 * uploads, Prometheus text, SQL, query parameters); a throw there is a 500 where a 4xx that
 * names the field was due. `npm test` runs a few hundred cases of each; this runs many more.
 * Sets the exit code to 1 when a surface fails.
 */
import { plainTable } from "./plain-table.ts";

export async function fuzzBench(): Promise<void> {
  const { BAD_INPUT_SURFACES, fuzzSurface } = await import("../../test/support/bad-input-surfaces.ts");
  const cases = 10_000;
  console.log(`\n## Fuzz: ${cases.toLocaleString("en-US")} generated bad inputs per surface\n`);
  const rows = [["surface", "cases", "failures", "ms"]];
  let failed = 0;
  for (const surface of BAD_INPUT_SURFACES) {
    const started = performance.now();
    let failure = "0";
    try {
      fuzzSurface(surface, cases);
    } catch (error) {
      failed++;
      failure = (error as Error).message.split("\n")[0]!.slice(0, 80);
    }
    rows.push([surface.name, String(cases), failure, (performance.now() - started).toFixed(0)]);
  }
  console.log(plainTable(rows));
  if (failed) process.exitCode = 1;
}
