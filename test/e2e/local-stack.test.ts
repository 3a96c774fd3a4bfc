/**
 * End to end: the local stack started exactly as `edgeload dev` and `edgeload demo` start
 * it, driven over HTTP like a user does, and the `edgeload` CLI run as a real process for
 * its exit codes and summary export. Load goes only to the loopback target.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { EdgeloadClient } from "../../cli/client.ts";
import type { RunView } from "../../core/run/protocol.ts";
import { runCli } from "./cli-process.ts";
import type { LocalStack } from "../../cli/local-stack.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-e2e-");
let stack: LocalStack;
let client: EdgeloadClient;
let stateDir: string;

beforeAll(() => {
  ({ stack, client, stateDir } = fixture);
});

/** p50 of `n` sequential requests from Node's own fetch: what the target itself takes. */
async function referenceP50(url: string, n = 60): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await (await fetch(url)).arrayBuffer();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

/** The CLI as a real process, talking to this file's stack. */
const cli = (args: string[]) => runCli(args, { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });

describe("a short run against the local target with a fixed delay", () => {
  it("holds the target rate, fails nothing, and measures the delay the target really has", async () => {
    const delayMs = 20;
    const url = `${stack.targetUrl}/delay?ms=${delayMs}`;
    const run = await client.createRun({
      name: "e2e fixed delay",
      target: stack.targetUrl,
      steps: [{ path: `/delay?ms=${delayMs}`, checks: [{ status: 200 }] }],
      executor: "constant-arrival-rate",
      rate: 200,
      duration: "8s",
      shards: 4,
      thresholds: { http_req_failed: ["rate==0"] },
    });
    const seen = new Set<string>();
    const final = await client.waitForEnd(run.id, (v) => seen.add(v.status), 250);
    expect(final.status).toBe("passed");
    expect(seen.has("running")).toBe(true);

    const summary = await client.summary(run.id);
    const e = summary.edgeload;
    const m = summary.metrics as Record<string, any>;
    expect(m.http_reqs.count).toBe(1600);
    expect(Math.abs(e.achievedRatePerS - e.targetRatePerS!) / e.targetRatePerS!).toBeLessThan(0.02);
    expect(m.http_req_failed.passes).toBe(0);
    expect(m.dropped_iterations.count).toBe(0);
    expect(Object.keys(e.regions).sort()).toEqual(["apac", "enam", "weur", "wnam"]);

    // The target answers a 20 ms delay in a little more (wrangler's dev proxy hop and
    // workerd's timer granularity): compare with what a plain client measures, too. The
    // bounds prove the delay is measured, not how fast this machine is: on a busy 2-core
    // host the overhead read 11–40 ms (tight figures belong to `npm run bench`).
    const p50 = m.http_req_duration.med as number;
    const reference = await referenceP50(url);
    expect(p50).toBeGreaterThanOrEqual(delayMs);
    expect(p50 - delayMs).toBeLessThan(60);
    expect(Math.abs(p50 - reference)).toBeLessThan(Math.max(15, reference));

    // Per-second series: the steady seconds run at the target rate (whole counts, the
    // schedule's; a second may end a request or two late on a busy host).
    const { points } = await client.timeseries(run.id);
    const steady = points.filter((p) => p.region === "all" && (p.t as number) >= 1 && (p.t as number) <= 6);
    for (const p of steady) expect(Math.abs((p.requests as number) - 200)).toBeLessThanOrEqual(20);
  });
});

describe("following a run to its end (EdgeloadClient.follow, as `edgeload run` does)", () => {
  const shortRun = () =>
    client.createRun({
      name: "follow",
      target: stack.targetUrl,
      steps: [{ path: "/delay?ms=2" }],
      executor: "constant-arrival-rate",
      rate: 20,
      duration: "3s",
      shards: 2,
      regions: ["wnam", "weur"],
      timeout: "5s",
    });
  /** The paths this process asks the API for while `body` runs; `/live` answered by `live` when given. */
  async function requestsDuring<T>(body: () => Promise<T>, live?: () => Response): Promise<{ result: T; paths: string[] }> {
    const paths: string[] = [];
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.origin === new URL(stack.apiUrl).origin) paths.push(url.pathname);
      return live && url.pathname.endsWith("/live") ? Promise.resolve(live()) : realFetch(input, init);
    });
    try {
      return { result: await body(), paths };
    } finally {
      spy.mockRestore();
    }
  }

  it("reads the run's live events, one request for the whole run, instead of asking for its status every second", async () => {
    const run = await shortRun();
    const views: RunView[] = [];
    const { result, paths } = await requestsDuring(() => client.follow(run.id, (v) => views.push(v)));
    expect(result.status).toBe("passed");
    expect(result.live.requests).toBe(60);
    // A status each coordinator tick: the run's ~3 s, and the one the stream opens with.
    expect(views.length).toBeGreaterThanOrEqual(3);
    expect(views.map((v) => v.progress.elapsedS)).toEqual([...views.map((v) => v.progress.elapsedS)].sort((a, b) => a - b));
    // The stream, then the final status once: no poll while the run went on.
    expect(paths).toEqual([`/v1/runs/${run.id}/live`, `/v1/runs/${run.id}`]);
  });

  it("polls the status instead when the live stream is refused (a run with as many watchers as it serves answers 503)", async () => {
    const run = await shortRun();
    const views: RunView[] = [];
    const { result, paths } = await requestsDuring(
      () => client.follow(run.id, (v) => views.push(v)),
      () => new Response("this run's live view has as many watchers as it can serve", { status: 503 }),
    );
    expect(result.status).toBe("passed");
    expect(result.live.requests).toBe(60);
    expect(paths[0]).toBe(`/v1/runs/${run.id}/live`);
    expect(paths.filter((p) => p === `/v1/runs/${run.id}`).length).toBeGreaterThanOrEqual(2);
    expect(views.at(-1)?.status).toBe("passed");
  });
});

describe("the edgeload CLI", () => {
  it("exits 0, prints a k6-style summary with per-region rows and writes --summary-export", async () => {
    const exportFile = join(stateDir, "summary.json");
    const result = await cli([
      "run",
      "--target",
      `${stack.targetUrl}/delay?ms=2`,
      "--rate",
      "40",
      "--duration",
      "2s",
      "--shards",
      "2",
      "--regions",
      "wnam,weur",
      "--summary-export",
      exportFile,
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/http_reqs\.+: 80 /);
    expect(result.stdout).toMatch(/^ {2}weur +40 /m);
    const exported = JSON.parse(await readFile(exportFile, "utf8"));
    expect(exported.metrics.http_reqs.count).toBe(80);
    expect(exported.edgeload.plan.shards).toBe(2);
  });

  it("exits 99 when thresholds fail", async () => {
    const result = await cli([
      "run",
      "--target",
      `${stack.targetUrl}/delay?ms=5`,
      "--rate",
      "20",
      "--duration",
      "1s",
      "--regions",
      "wnam",
      "--threshold",
      // A count, not a time: a timing threshold that fails while the busy machine saturates
      // the generator is inconclusive (75), not failed.
      "http_reqs=count<1",
    ]);
    expect(result.code).toBe(99);
    expect(result.stdout).toContain("✗ http_reqs 'count<1'");
  });

  it("lists what failed, with counts, at the end of a run's summary", async () => {
    const result = await cli(["run", "--target", `${stack.targetUrl}/delay?ms=2&status=503`, "--rate", "20", "--duration", "1s", "--regions", "wnam"]);
    expect(result.code).toBe(0); // as k6: no thresholds, no failed verdict, however many 503s
    expect(result.stdout).toMatch(/STATUS CODES\n\s+status\s+count\s+share\n\s+503 ✗\s+20\s+100\.00%/);
    expect(result.stdout).toMatch(/ERRORS \(first distinct, most frequent first\)\n\s+error\s+count\n\s+HTTP 503 Service Unavailable\s+20/);
  });

  it("plan asks the deployment it is given whether the target would be refused, before any load", async () => {
    const spec = join(fixture.stateDir, "plan-spec.json");
    const body = { target: "https://auth.example.com", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 10, duration: "5s" };
    await writeFile(spec, JSON.stringify(body));
    const refused = await cli(["plan", spec]);
    expect(refused.code).toBe(104);
    expect(refused.stdout).toMatch(
      /target: https:\/\/auth\.example\.com — would be refused: this deployment has no allowed targets yet: .*npx wrangler secret put ALLOWED_TARGETS/,
    );
    expect(refused.stderr).toContain("the deployment would refuse this run");
    await writeFile(spec, JSON.stringify({ ...body, target: `${stack.targetUrl}/delay?ms=5` }));
    const allowed = await cli(["plan", spec]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain("— allowed by the deployment");
    // Without a deployment named, nothing is contacted and the line says so.
    const offline = await runCli(["plan", spec], { EDGELOAD_URL: "", EDGELOAD_TOKEN: "" });
    expect(offline.stdout).toContain("not checked against a deployment's ALLOWED_TARGETS");
  });

  it.each([
    // [arguments, what stderr says]
    [["run", "--target", "not-a-url", "--rate", "1", "--duration", "1s"], /not an absolute URL/],
    [["run", "--target", "http://127.0.0.1:9/", "--rate", "1", "--duration", "soon"], /duration: "soon" is not a duration/],
    [["run", "/nonexistent/spec.json"], /file not found: \/nonexistent\/spec.json/],
  ])("exits 104 on invalid config: %j", async (args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(104);
    expect(result.stderr).toMatch(message);
  });
});

describe("seeding access tokens (seed → R2 → signed URL)", () => {
  it("makes the exact mix, truly revokes, verifies, and serves the set at a signed TOKEN_URL", async () => {
    const result = await cli([
      "seed",
      "access-tokens",
      "--count",
      "200",
      "--users",
      "10",
      "--name",
      "e2e-tokens",
      "--base-url",
      stack.targetUrl,
      "--client-id",
      stack.targetClient.clientId,
      "--client-secret",
      stack.targetClient.clientSecret,
      "--admin-secret",
      stack.targetAdminSecret,
    ]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("(all correct)");
    const tokenUrl = /TOKEN_URL \(expires [^)]+\):\n {2}(\S+)/.exec(result.stdout)![1]!;

    // Anyone holding the URL can read the set: no API token.
    const doc = (await (await fetch(tokenUrl)).json()) as { tokens: Array<{ access_token: string; type: string }>; metadata: any };
    const { mixCounts } = await import("../../seeds/token-mix.ts");
    const { parseSeedSet } = await import("../../core/data/seed-set.ts");
    expect(parseSeedSet(doc).ok).toBe(true);
    expect(doc.metadata.counts).toEqual(mixCounts(200));
    expect(doc.metadata.total).toBe(200);
    expect(doc.metadata.verification.all_correct).toBe(true);

    // Every revoked token is inactive at the provider, every valid one active.
    const auth = `Basic ${btoa(`${stack.targetClient.clientId}:${stack.targetClient.clientSecret}`)}`;
    const active = async (t: string) =>
      (
        (await (
          await fetch(`${stack.targetUrl}/introspect`, { method: "POST", headers: { authorization: auth }, body: new URLSearchParams({ token: t }) })
        ).json()) as { active: boolean }
      ).active;
    for (const t of doc.tokens.filter((x) => x.type === "revoked")) expect(await active(t.access_token)).toBe(false);
    for (const t of doc.tokens.filter((x) => x.type === "valid").slice(0, 20)) expect(await active(t.access_token)).toBe(true);

    // The bare-array URL serves just the valid tokens.
    const arrayUrl = /bare array[^\n]*\n {2}(\S+)/.exec(result.stdout)![1]!;
    expect(await (await fetch(arrayUrl)).json()).toEqual(doc.tokens.filter((t) => t.type === "valid").map((t) => t.access_token));
  });
});
