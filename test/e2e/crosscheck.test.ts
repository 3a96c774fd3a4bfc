/**
 * Crosscheck end to end: the same constant-rate load on the local target's `/delay?ms=20`,
 * sent by an edge run and by k6 replaying it (the invocation `edgeload crosscheck --run-k6`
 * builds from the stored run), at 100/s and 150/s for 5 s each, both tools at once (an
 * instrument comparison is only fair under the same conditions). The test holds what does
 * not depend on the machine's speed: k6 is invoked with the run's own schedule, both send
 * the same number of requests within 1%, and the comparison has every row (whole run and
 * per step) under the tolerances core/results/crosscheck.ts states.
 *
 * Whether the latencies agree within those tolerances is a fidelity figure, and these
 * machines are shared and noisy: it is measured and printed here, and judged in the
 * benchmark (`npm run bench -- --only generator` prints the crosscheck verdict per rate),
 * as speed targets are. On a 2-core host where k6 itself reads 25–31 ms for a 20 ms
 * endpoint, edgeload's p50/p95 sat 2–11 ms above k6's — issue 17's work — and a timed
 * assertion of ±5 ms there fails on the host, not on the code.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { crosscheck, edgeFigures, TOLERANCES, type Crosscheck } from "../../core/results/crosscheck.ts";
import { renderCrosscheck } from "../../core/results/crosscheck-text.ts";
import { parseK6Summary } from "../../core/formats/k6-summary.ts";
import { k6Invocation, runK6, type StoredSpec } from "../../cli/k6-replay.ts";
import { runCli } from "./cli-process.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

describeWithK6("crosscheck: edgeload and k6 on the same load", (k6) => {
  const fixture = useLocalStack("edgeload-crosscheck-");
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-crosscheck-"));
    await (await fetch(`${fixture.stack.targetUrl}/delay?ms=20`)).arrayBuffer(); // warm the target
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** One edge run and k6's replay of it, started together; their comparison. */
  async function measurePair(rate: number): Promise<Crosscheck> {
    const { client, stack } = fixture;
    const run = await client.createRun({
      name: `crosscheck ${rate}/s`,
      target: stack.targetUrl,
      steps: [{ path: "/delay?ms=20" }],
      executor: "constant-arrival-rate",
      rate,
      duration: "5s",
      regions: ["wnam"],
    });
    const record = await client.runRecord(run.id);
    const invocation = k6Invocation(record!.spec as unknown as StoredSpec, {});
    expect(invocation.vars).toMatchObject({ BASE_URL: stack.targetUrl, PATH: "/delay?ms=20", RATE: String(rate), DURATION: "5000ms" });
    // k6 needs ~0.3 s to start its VUs: launch it that much before the edge run's T0.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(run.startsAt) - Date.now() - 300)));
    const k6Done = runK6(k6, invocation, join(dir, `k6-${rate}.json`), { quiet: true });
    // Followed on its live event stream, as the CLI does.
    const view = await client.follow(run.id, () => {});
    expect(view.status).toBe("passed");
    const parsed = parseK6Summary(JSON.parse(await readFile(await k6Done, "utf8")));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(parsed.format).toBe("handle-summary");
    const result = crosscheck(edgeFigures(await client.summary(run.id)), parsed.figures);
    console.log(`crosscheck at ${rate}/s (run ${run.id}):\n${renderCrosscheck(result)}\n`);
    return result;
  }

  /** 50/s for 3 s on the endpoint's 20 ms, one region: the runs the CLI tests replay. */
  const shortSpec = (name: string) => ({
    name,
    target: fixture.stack.targetUrl,
    steps: [{ path: "/delay?ms=20" }],
    executor: "constant-arrival-rate",
    rate: 50,
    duration: "3s",
    regions: ["wnam"],
  });

  const overall = (c: Crosscheck, metric: string) => c.rows.find((r) => r.metric === metric && r.step === null)!;

  it.each([100, 150])("at %i/s for 5 s: both send the run's schedule, requests within 1%, every row compared under the stated tolerances", async (rate) => {
    const result = await measurePair(rate);
    for (const [stat, t] of [
      ["p50", TOLERANCES.median],
      ["p95", TOLERANCES.tail],
      ["p99", TOLERANCES.p99],
    ] as const) {
      const row = overall(result, stat);
      expect(row.rule).toBe(t.rule);
      expect(row.edge).toBeGreaterThan(20); // the endpoint's own 20 ms, read by both
      expect(row.k6).toBeGreaterThan(20);
      expect(row.tolerance).toBeGreaterThanOrEqual(Math.max(t.absoluteMs, t.relative * row.k6!));
    }
    const requests = overall(result, "requests");
    expect(requests.edge).toBe(rate * 5);
    expect(Math.abs(requests.difference!) / requests.k6!).toBeLessThanOrEqual(0.01);
    expect(requests.verdict).toBe("agree");
    // The step both name ("default", an unnamed single step) is compared too.
    expect(result.rows.filter((r) => r.step === "default").map((r) => r.metric)).toEqual(["requests", "p50", "p95", "p99"]);
  });

  it("--run-k6 --floor then replays the run with workerd's own paced fetch loop, and says whose each disagreeing latency row is", async () => {
    const { client, stack } = fixture;
    const run = await client.createRun(shortSpec("floor"));
    await client.follow(run.id, () => {});
    const result = await runCli(["crosscheck", run.id, "--run-k6", "--floor", "--format", "json"], { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
    expect([0, 99], result.stderr).toContain(result.code);
    // The JSON follows the progress lines (k6's own output among them).
    const out = JSON.parse(result.stdout.slice(result.stdout.search(/^\{/m))) as {
      comparison: Crosscheck;
      floor: { url: string; ratePerS: number; requests: number; latency: { p50: number; p90: number; p95: number; p99: number; max: number } };
      attributions: Array<{ metric: string; residualMs: number; runtimeMs: number; edgeloadMs: number; owner: string }>;
    };
    expect(out.floor).toMatchObject({ url: `${stack.targetUrl}/delay?ms=20`, ratePerS: 50, requests: 150 });
    expect(out.floor.latency.p50).toBeGreaterThanOrEqual(20); // the endpoint's own 20 ms, read by the floor too
    const { p50, p90, p95, p99, max } = out.floor.latency;
    expect([p50, p90, p95, p99, max]).toEqual([p50, p90, p95, p99, max].sort((a, b) => a - b));
    expect(result.code).toBe(out.comparison.verdict === "agree" ? 0 : 99);
    // One attribution per disagreeing latency row; each residual splits into the runtime's and edgeload's.
    const disagreeing = out.comparison.rows.filter((r) => r.step === null && r.verdict === "disagree" && r.unit === "ms");
    expect(out.attributions.map((a) => a.metric)).toEqual(disagreeing.map((r) => r.metric));
    for (const a of out.attributions) expect(a.runtimeMs + a.edgeloadMs).toBeCloseTo(a.residualMs, 6);
  }, 120_000);

  it("--floor refuses, before anything runs, a run its bare GET loop cannot replay", async () => {
    const { client, stack } = fixture;
    const run = await client.createRun({
      name: "two steps",
      target: stack.targetUrl,
      steps: [{ path: "/delay?ms=1" }, { path: "/delay?ms=2" }],
      executor: "constant-arrival-rate",
      rate: 10,
      duration: "1s",
      regions: ["wnam"],
    });
    await client.follow(run.id, () => {});
    const result = await runCli(["crosscheck", run.id, "--run-k6", "--floor"], { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
    expect(result.code).toBe(104);
    expect(result.stderr).toContain(`--floor replays one GET step at a constant arrival rate (a bare paced fetch loop); run ${run.id} has 2 steps`);
    expect(result.stdout).not.toContain("running k6");
    expect((await client.crosschecks(run.id)).imports).toHaveLength(0);
  }, 60_000);

  it("--abba runs edgeload, k6, k6, edgeload on one spec and says whether the tools differ beyond the target's own drift", async () => {
    const { stack } = fixture;
    const spec = join(dir, "abba.json");
    await writeFile(spec, JSON.stringify(shortSpec("abba")));
    const result = await runCli(["crosscheck", "--abba", spec, "--format", "json"], { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
    expect([0, 99], result.stderr).toContain(result.code);
    const abba = JSON.parse(result.stdout.slice(result.stdout.indexOf("{"))) as {
      runs: { a1: string; a2: string };
      verdict: string;
      rows: Array<{ metric: string; step: string | null; difference: number | null; targetSpread: number | null; verdict: string }>;
    };
    expect(["agree", "differ beyond the target's own noise", "the target moved too much to tell"]).toContain(abba.verdict);
    expect(result.code).toBe(abba.verdict === "agree" ? 0 : 99);
    // Both tools follow the same schedule in all four runs: the request counts agree exactly.
    const requests = abba.rows.find((r) => r.metric === "requests" && r.step === null)!;
    expect(requests).toMatchObject({ verdict: "agree" });
    expect(Math.abs(requests.difference!)).toBeLessThanOrEqual(2);
    // Every latency row has a measured spread of the target between each tool's two runs.
    for (const r of abba.rows.filter((r) => r.metric === "p95")) expect(r.targetSpread).not.toBeNull();
    // Each pair is stored as an ordinary crosscheck of its edge run.
    for (const id of [abba.runs.a1, abba.runs.a2]) expect((await fixture.client.crosschecks(id)).imports).toHaveLength(1);
  }, 120_000);
});
