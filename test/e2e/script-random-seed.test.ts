/**
 * k6's randomSeed under `edgeload run`, in the shard's loaded isolate: a VU that seeds draws
 * the same numbers in every run (sfc32's for the seed, k6-compat/runtime/vu-modules/vu-math.ts),
 * while a VU beside it in the same run, unseeded, draws the isolate's Math.random. Two short
 * runs of a script that sends nothing; the VUs print their draws as console lines.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../k6-compat/runtime/vu-modules/vu-math.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const SCRIPT = [
  'import { randomSeed, sleep } from "k6";',
  'export const options = { scenarios: { draws: { executor: "per-vu-iterations", vus: 2, iterations: 1 } } };',
  "export default function () {",
  "  if (__VU === 1) randomSeed(42);",
  "  const draws = [];",
  // Sleeps between draws: the two VUs take turns in the isolate.
  "  for (let i = 0; i < 3; i++) { draws.push(Math.random()); sleep(0.05); }",
  '  console.log("draws", JSON.stringify(draws));',
  "}",
];

describe("randomSeed under edgeload run", () => {
  const fixture = useLocalStack("edgeload-random-seed-");

  /** Each VU's printed draws, by __VU. */
  async function drawsByVu(script: string): Promise<Map<number, number[]>> {
    // The run needs a target, though the script sends nothing.
    const r = await runCli(["run", script, "--quiet", "-e", `BASE_URL=${fixture.stack.targetUrl}`], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    const output = r.stdout + r.stderr;
    const byVu = new Map<number, number[]>();
    for (const [, json, vu] of output.matchAll(/draws (\[[^\]]*\]) {2}source=console vu=(\d+)/g)) byVu.set(Number(vu), JSON.parse(json!) as number[]);
    expect(byVu.size, output).toBe(2);
    return byVu;
  }

  it("repeats a seeded VU's draws run after run, and leaves the other VU's unseeded", async () => {
    const dir = await mkdtemp(join(tmpdir(), "edgeload-random-seed-"));
    const script = join(dir, "seeded.js");
    await writeFile(script, `${SCRIPT.join("\n")}\n`);
    const first = await drawsByVu(script);
    const second = await drawsByVu(script);
    const seeded = Array.from({ length: 3 }, seededRandom(42n));
    expect(first.get(1)).toEqual(seeded);
    expect(second.get(1)).toEqual(seeded);
    // Unseeded: other numbers each run (equal only by a 2^-150 chance).
    expect(second.get(2)).not.toEqual(first.get(2));
  });
});
