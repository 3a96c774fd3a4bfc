/**
 * End to end: `edgeload ladder` as a real process against the local stack, climbing rates
 * on a target that serves at most 150 requests a second (the `maxRps` knob) and finding
 * that limit in its capacity table. Load goes only to the loopback target.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapacityTable } from "../../core/plan/capacity.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-ladder-");
let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), "edgeload-ladder-out-"));
});
afterAll(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(["ladder", ...args], { EDGELOAD_URL: fixture.stack.apiUrl, EDGELOAD_TOKEN: fixture.stack.token });

describe("edgeload ladder", () => {
  it("climbs 50 → 100 → 200/s on a target capped at 150/s: 100 is recommended and peak, 200 the hard limit, 300 never runs", async () => {
    const out = join(outDir, "capacity.json");
    const result = await cli([
      "--target",
      `${fixture.stack.targetUrl}/delay?ms=2&maxRps=150`,
      "--rates",
      "50,100,200,300",
      "--duration",
      "2s",
      "--cool-down",
      "500ms",
      "--shards",
      "2",
      "--regions",
      "wnam,enam",
      "--threshold",
      "http_req_failed=rate<0.01",
      "--out",
      out,
    ]);
    console.log(result.stdout);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);

    const doc = JSON.parse(await readFile(out, "utf8")) as CapacityTable & { planned: string[]; stopped: string | null };
    expect(doc.planned).toEqual(["50/s", "100/s", "200/s", "300/s"]);
    expect(doc.steps.map((s) => s.ratePerS)).toEqual([50, 100, 200]);
    expect(doc.stopped).toMatch(/^stopped climbing at 200\/s: error rate .* over the 1\.00% limit/);
    expect([doc.recommended?.ratePerS, doc.peak?.ratePerS, doc.hardLimit?.ratePerS]).toEqual([100, 100, 200]);

    // The evidence: 100/s delivered cleanly, 200/s had a quarter of its requests shed (50 of
    // each full second's 200) and failed its threshold.
    const peak = doc.peak!.evidence;
    expect(peak.errorRate).toBe(0);
    expect(peak.dropped).toBe(0);
    expect(peak.achievedRatePerS).toBeGreaterThan(95);
    expect(peak.failedThresholds).toEqual([]);
    expect(peak.p99Ms).toBeGreaterThanOrEqual(2);
    const limit = doc.hardLimit!.evidence;
    expect(limit.errorRate).toBeGreaterThan(0.05);
    expect(limit.errorRate).toBeLessThan(0.3);
    expect(limit.failedThresholds).toEqual(["http_req_failed rate<0.01"]);
    expect(doc.hardLimit!.reasons[0]).toMatch(/^error rate/);

    // The same table on the terminal, and one line per step.
    expect(result.stdout.match(/^step \d\/4 .*achieved/gm)).toHaveLength(3);
    expect(result.stdout).toMatch(/recommended\s+100\s/);
    expect(result.stdout).toMatch(/hard limit\s+200\s/);
  }, 60_000);

  it("refuses bad input with exit code 104 before running anything", async () => {
    const target = `${fixture.stack.targetUrl}/delay`;
    for (const args of [
      ["--target", target, "--rates", "100,50", "--duration", "1s"], // rates must rise
      ["--scenario", "userinfo", "--presets", "rps100,rps7", "--target", target], // no such preset
    ]) {
      const result = await cli(args);
      expect([result.code, result.stdout]).toEqual([104, ""]);
    }
  });
});
