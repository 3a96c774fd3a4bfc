/**
 * `edgeload plan` of a run over the deployment's caps: the whole plan is printed all the
 * same (planned without the caps), then each cap it needs with the command that raises it;
 * the same caps given as `--var` plan it within them, and every platform limit. With
 * `--probe` it plans at the target's measured time to first byte (issue 49).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_LIMITS, planRun } from "../core/plan/plan.ts";
import { ArrivalSchedule } from "../core/schedule/arrival-schedule.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";
import { knobs } from "../workers/target/knobs.ts";
import { capsNeeded } from "./plan-command.ts";

const edgeload = edgeloadInProcess();
// No deployment named: nothing is contacted.
beforeEach(() => vi.stubEnv("EDGELOAD_URL", ""));
afterEach(() => vi.unstubAllEnvs());

describe("edgeload plan over the deployment's caps", () => {
  it("prints the whole plan, then each cap it needs and the command that raises it, and exits 104", async () => {
    const { code, stdout, stderr } = await edgeload("plan", "examples/edge-1m.json");
    expect(code).toBe(104);
    expect(stdout).toContain("shards: 7,146 (wnam 1,191,");
    expect(stdout).toContain("tree: 7,146 shards → 72 aggregators (≤ 100 children each) → 6 region roots → coordinator");
    expect(stdout).toContain("estimated cost");
    expect(stdout).toMatch(/MAX_RATE_PER_S +needs 1,000,000, the deployment allows 40,000/);
    expect(stdout).toMatch(/MAX_SHARDS +needs 7,146, the deployment allows 256/);
    expect(stdout).toContain("echo 1000000 | npx wrangler secret put MAX_RATE_PER_S");
    expect(stdout).toContain("echo 7146 | npx wrangler secret put MAX_SHARDS");
    expect(stdout).toContain("echo 240000000 | npx wrangler secret put MAX_TOTAL_REQUESTS");
    expect(stdout).toContain("--var MAX_RATE_PER_S=1000000 --var MAX_SHARDS=7146 --var MAX_TOTAL_REQUESTS=240000000");
    expect(stderr).toContain("the run needs 3 of the deployment's caps raised: MAX_RATE_PER_S, MAX_SHARDS, MAX_TOTAL_REQUESTS");
  });

  it("plans under the caps given as --var, within every platform limit and its budget: exit 0", async () => {
    const { code, stdout, stderr } = await edgeload(
      "plan",
      "examples/edge-1m.json",
      "--var",
      "MAX_RATE_PER_S=1000000",
      "--var",
      "MAX_SHARDS=8000",
      "--var",
      "MAX_TOTAL_REQUESTS=240000000",
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).not.toContain("OVER");
    expect(stdout).not.toContain("deployment caps");
  });

  it("refuses a cap --var that is not a number above 0", async () => {
    const { code, stderr } = await edgeload("plan", "examples/edge-1m.json", "--var", "MAX_SHARDS=lots");
    expect(code).toBe(104);
    expect(stderr).toContain('--var MAX_SHARDS: a deployment cap, a number above 0, not "lots"');
  });
});

describe("capsNeeded", () => {
  const spec = (raw: Record<string, unknown>) => {
    const r = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], ...raw });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.spec;
  };
  const uncapped = { ...DEFAULT_LIMITS, maxRatePerS: Infinity, maxShards: Infinity, maxTotalRequests: Infinity, maxDurationMs: Infinity, maxVUs: Infinity };

  it.each([
    // Within every cap: nothing to raise.
    [{ executor: "constant-arrival-rate", rate: 100, duration: "1m" }, []],
    // 50,000/s for a minute: the rate, 3,000,000 requests (within), and 360 shards at 30 ms (over 256).
    [{ executor: "constant-arrival-rate", rate: 50_000, duration: "1m", expectedLatency: "30ms" }, ["MAX_RATE_PER_S", "MAX_SHARDS"]],
    // Two hours: the duration only.
    [{ executor: "constant-arrival-rate", rate: 10, duration: "2h" }, ["MAX_DURATION_S"]],
    // 6,000 VUs: the VU cap of a closed model, never its rate; and the shards its estimated rate needs.
    [{ executor: "constant-vus", vus: 6_000, duration: "1m" }, ["MAX_VUS", "MAX_SHARDS"]],
  ])("%j → %j", (raw, settings) => {
    const s = spec(raw);
    const r = planRun(s, new ArrivalSchedule(s.stages).total, uncapped);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(capsNeeded(s, r.plan, DEFAULT_LIMITS).map((c) => c.setting)).toEqual(settings);
  });
});

/**
 * `plan --probe` against the local target's `/delay?ms=` route (workers/target/knobs.ts, served
 * on loopback by node:http): the plan is sized for the latency measured, not the spec's guess.
 */
describe("edgeload plan --probe", () => {
  let server: Server;
  let origin = "";
  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const answer = await knobs(new Request(`http://127.0.0.1${req.url}`, { method: req.method }));
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A spec file of 1,000/s from two regions against `path`, its expectedLatency a low guess of 30 ms. */
  const specFile = (target: string, path: string) => {
    const file = join(mkdtempSync(join(tmpdir(), "edgeload-probe-")), "spec.json");
    const raw = {
      target,
      steps: [{ path }],
      executor: "constant-arrival-rate",
      rate: 1000,
      duration: "1m",
      regions: ["wnam", "weur"],
      expectedLatency: "30ms",
    };
    writeFileSync(file, JSON.stringify(raw));
    return { file, raw };
  };
  /** Shards planRun gives the spec at `latencyMs`. */
  const shardsAt = (raw: Record<string, unknown>, latencyMs: number) => {
    const parsed = parseRunSpec({ ...raw, expectedLatency: `${latencyMs}ms` });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const r = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, DEFAULT_LIMITS);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    return r.plan.shards.length;
  };

  it("/delay?ms=80 measures about 80 ms and plans the shards 80 ms needs, not the spec's 30 ms", async () => {
    const { file, raw } = specFile(origin, "/delay?ms=80");
    const { code, stdout, stderr } = await edgeload("plan", file, "--probe", "--format", "json");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.latency.source).toBe("probe");
    expect(out.latency.specMs).toBe(30);
    expect(out.latency.probe.requests).toBe(20);
    expect(out.latency.probe.url).toBe(`${origin}/delay?ms=80`);
    expect(out.latency.probe.p95Ms).toBeGreaterThanOrEqual(80);
    expect(out.latency.probe.p95Ms).toBeLessThan(200); // loopback adds little; a busy machine some
    expect(out.latency.plannedMs).toBe(Math.ceil(out.latency.probe.p95Ms));
    // 1,000/s at 6 slots over 80 ms at 70 %: 20 shards; at the spec's 30 ms it would be 8.
    expect(out.plan.shards).toHaveLength(shardsAt(raw, out.latency.plannedMs));
    expect(out.plan.shards.length).toBeGreaterThanOrEqual(shardsAt(raw, 80));
    expect(shardsAt(raw, 80)).toBe(20);
    expect(shardsAt(raw, 30)).toBe(8);
    // The latency table prices the measured latency beside 30, 50, 100 and 200 ms.
    expect(out.latencyCosts.map((c: { latencyMs: number }) => c.latencyMs)).toEqual(
      [...new Set([30, 50, out.latency.plannedMs, 100, 200])].sort((a, b) => a - b),
    );
  });

  it("prints the probe's figures and marks the measured latency in the table", async () => {
    const { file } = specFile(origin, "/delay?ms=80");
    const { code, stdout } = await edgeload("plan", file, "--probe");
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`latency probe: p95 \\d+(\\.\\d)? ms to first byte .* over 20 GET of ${origin}/delay\\?ms=80 from this machine; answered 200×20`),
    );
    expect(stdout).toMatch(/the plan above is at \d+ ms: the probe's p95, the spec says 30 ms/);
    // The marked row is the plan printed above it.
    const [, ms, shards] = /→ (\d+) ms +(\d+) /.exec(stdout) ?? [];
    expect(stdout).toContain(`shards: ${shards} (`);
    expect(stdout).toContain(`each at ${ms} ms with 6 slots`);
  });

  it("without --probe plans at the spec's expectedLatency and sends nothing", async () => {
    const { file } = specFile("http://127.0.0.1:9", "/delay?ms=80");
    const { code, stdout } = await edgeload("plan", file, "--format", "json");
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.latency).toEqual({ plannedMs: 30, source: "spec", specMs: 30, probe: null });
    expect(out.plan.shards).toHaveLength(8);
  });

  it("a target that does not answer: exit 104 naming it", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { file } = specFile(`http://127.0.0.1:${port}`, "/delay?ms=80");
    const { code, stderr } = await edgeload("plan", file, "--probe");
    expect(code).toBe(104);
    expect(stderr).toContain(`--probe: GET http://127.0.0.1:${port}/delay?ms=80 answered 0 of 20 requests`);
  });
});
