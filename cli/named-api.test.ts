/**
 * No silent fallbacks: an API the user named (--url, EDGELOAD_URL, a running `edgeload dev`)
 * is used or the command fails saying what is missing; it is never swapped for the local
 * state, and a fetch that fails never turns into an empty section or a missing line. Each
 * case runs `edgeload` in this process against a closed port or a local fake of the API.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { planRun } from "../core/plan/plan.ts";
import { RunTotals } from "../core/run/run-totals.ts";
import { buildSummary, type Summary } from "../core/run/summary.ts";
import { ArrivalSchedule } from "../core/schedule/arrival-schedule.ts";
import { reportInput } from "../reports/report-input.ts";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";
import { startServer, type Handler, type TestServer } from "../test/support/cloudflare-analytics.ts";
import { validSpec } from "../test/support/run-spec-fixtures.ts";
import { EdgeloadClient } from "./client.ts";
import { CliError } from "./connection.ts";
import type { DevFile } from "./dev-file.ts";
import { printsViewLinks, submitAndFollow } from "./follow-run.ts";
import { localReportInput } from "./report-command.ts";

// The running `edgeload dev` each test sees (none unless it sets one), whatever runs on this machine.
const dev = vi.hoisted(() => ({ file: null as DevFile | null }));
vi.mock("./dev-file.ts", async (original) => ({ ...(await original<typeof import("./dev-file.ts")>()), readDevFile: async () => dev.file }));

const edgeload = edgeloadInProcess();
let dir: string;
let server: TestServer | undefined;
beforeEach(async () => {
  vi.stubEnv("EDGELOAD_URL", "");
  vi.stubEnv("EDGELOAD_TOKEN", "");
  dev.file = null;
  dir = await mkdtemp(join(tmpdir(), "edgeload-named-api-"));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A loopback URL nothing listens on. */
async function closedUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** A 2-second run against `target` that sent nothing: a summary the report and the run's end can print. */
function summaryOf(target: string): Summary {
  const spec = validSpec({ target, steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 1, duration: "2s", regions: ["wnam"] });
  const planned = planRun(spec, new ArrivalSchedule(spec.stages).total);
  if (!planned.ok) throw new Error("plan failed");
  const shards = planned.plan.shards.map((s) => ({ index: s.index, region: s.region, segment: s.segment, colo: "local", telemetry: null }));
  return buildSummary({ runId: "r1", status: "passed", spec, plan: planned.plan, t0Ms: 0, endMs: 2000, totals: new RunTotals(), shards });
}

/** The edgeload API for run r1 (its report's data and read-only SQL), plus `more` routes. */
function api(target: string, more: Handler = () => ({ status: 404, body: {} })): Handler {
  return (req, i) => {
    if (req.path === "/v1/runs/r1/report?format=json")
      return { status: 200, body: reportInput(summaryOf(target), { windows: [], histograms: [], shards: [], durationS: 2 }) };
    if (req.path === "/v1/sql") return { status: 200, body: { rows: [], truncated: false } };
    return more(req, i);
  };
}

describe("a named API is used or the command fails: never the local state instead", () => {
  it.each([
    // --url without a token: the flag missing is named, nothing is read from .edgeload/state.
    ["query", []],
    // The same for a report, and no report folder is made.
    ["report", ["--out"]],
  ])("%s --url with no token exits 104 naming --token and EDGELOAD_TOKEN", async (command, outFlag) => {
    const url = await closedUrl();
    const out = join(dir, "r1");
    const r = await edgeload(command, "r1", "--url", url, ...outFlag.flatMap((flag) => [flag, out]));
    expect(r.stderr).toBe(`edgeload: --token (or EDGELOAD_TOKEN) is required with --url ${url}`);
    expect(r.code).toBe(104);
    expect(r.stdout).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it("names EDGELOAD_URL when that is what named the API", async () => {
    const url = await closedUrl();
    vi.stubEnv("EDGELOAD_URL", url);
    const r = await edgeload("query", "r1");
    expect(r.stderr).toBe(`edgeload: --token (or EDGELOAD_TOKEN) is required with EDGELOAD_URL (${url})`);
    expect(r.code).toBe(104);
  });

  it("refuses --local with --url: two sources named, exit 104", async () => {
    const r = await edgeload("query", "r1", "--local", "--url", "http://127.0.0.1:9");
    expect(r.stderr).toContain("--local reads .edgeload/state, --url names an API (http://127.0.0.1:9): pass one of them");
    expect(r.code).toBe(104);
  });

  it("query against an API that does not answer exits 1 naming its URL", async () => {
    const url = await closedUrl();
    const r = await edgeload("query", "r1", "--url", url, "--token", "t");
    expect(r.stderr).toBe(`edgeload: cannot reach the edgeload API at ${url}: ECONNREFUSED`);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
  });

  it("report against an API that does not answer exits 1 and writes nothing, not even the index", async () => {
    const url = await closedUrl();
    const r = await edgeload("report", "r1", "--url", url, "--token", "t", "--out", join(dir, "r1"));
    expect(r.stderr).toBe(`edgeload: cannot reach the edgeload API at ${url}: ECONNREFUSED`);
    expect(r.code).toBe(1);
    expect(existsSync(join(dir, "r1"))).toBe(false);
    expect(existsSync(join(dir, "INDEX.md"))).toBe(false);
  });

  it("query whose run summary the API fails to give exits non-zero instead of printing figures to no clock", async () => {
    server = await startServer((req) => {
      if (req.path.startsWith("/v1/runs/r1/query?")) return { status: 200, body: { rows: [{ requests: 2, p95: 13.024 }] } };
      return { status: 500, body: "the summary broke" };
    });
    const r = await edgeload("query", "r1", "--url", server.url, "--token", "t");
    expect(r.stderr).toContain("HTTP 500");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
  });
});

describe("a report's delivery section says why it has no reconciliation", () => {
  it("says the target's counts were not checked when the target does not count (exit 0: nothing failed)", async () => {
    server = await startServer(api("https://auth.example.com"));
    const r = await edgeload("report", "r1", "--url", server.url, "--token", "t", "--out", join(dir, "r1"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const markdown = await readFile(join(dir, "r1", "report.md"), "utf8");
    expect(markdown).toContain("## Delivery (sent against received)\n\nNot checked: only a target that counts what it receives");
  });

  it("writes the report saying the local target's ledger could not be read, and exits 1", async () => {
    // The running stack's API and target on one fake, the run against that target: its ledger answers 500.
    const self = { url: "" };
    server = await startServer((req, i) => api(self.url, () => ({ status: 500, body: "ledger down" }))(req, i));
    self.url = server.url;
    dev.file = { apiUrl: server.url, targetUrl: server.url, targetAdminSecret: "admin", token: "t", pid: process.pid, startedAt: "" } as unknown as DevFile;
    const r = await edgeload("report", "r1", "--out", join(dir, "r1"));
    const reason = `the target's request ledger at ${server.url} answered 500: "ledger down"`;
    expect(r.stderr).toBe(`edgeload: the report's delivery is not reconciled: ${reason}`);
    expect(r.code).toBe(1);
    const markdown = await readFile(join(dir, "r1", "report.md"), "utf8");
    expect(markdown).toContain(`## Delivery (sent against received)\n\nNot reconciled: ${reason}`);
  });
});

describe("a local run that cannot be read is an error naming it", () => {
  /** A results database holding `runs` rows (id, status, summary_json) and nothing else. */
  function localDb(rows: Array<[string, string, string | null]>): DatabaseSync {
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT, summary_json TEXT)");
    for (const row of rows) db.prepare("INSERT INTO runs VALUES (?, ?, ?)").run(...row);
    return db;
  }
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error as CliError,
    );

  it.each<[string, Array<[string, string, string | null]>, number, string]>([
    // A stored summary that does not parse: exit 1 with the run named, not a SyntaxError's stack.
    ["a summary that does not parse", [["r1", "passed", "{not json"]], 1, "run r1 in .edgeload/state cannot be read: "],
    // No such run: the caller's input, exit 104 as the API's 404 is.
    ["a run that is not there", [], 104, "no run r1 in the local results"],
  ])("%s", async (_, rows, code, message) => {
    const error = await failure(localReportInput("r1", localDb(rows)));
    expect(error).toBeInstanceOf(CliError);
    expect(error!.message).toContain(message);
    expect(error!.code).toBe(code);
  });
});

describe("the end of a run says when its dashboard link failed", () => {
  it("prints why there is no link, and the run's own exit code", async () => {
    const view = { id: "r1", status: "passed", progress: { elapsedS: 2, durationS: 2, fraction: 1 } };
    server = await startServer((req) => {
      if (req.method === "POST" && req.path === "/v1/runs")
        return { status: 201, body: { id: "r1", status: "pending", startsAt: "now", plan: { shards: [{ index: 0, region: "wnam" }], notes: [] }, links: {} } };
      if (req.path === "/v1/runs/r1") return { status: 200, body: view };
      if (req.path === "/v1/runs/r1/summary") return { status: 200, body: summaryOf("https://auth.example.com") };
      if (req.path === "/v1/dashboard-links") return { status: 503, body: "no dashboard here" };
      return { status: 404, body: {} };
    });
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
    vi.stubEnv("CI", "");
    const code = await submitAndFollow(new EdgeloadClient(server.url, "t"), { target: "https://auth.example.com" }, { quiet: true });
    vi.unstubAllEnvs();
    expect(code).toBe(0);
    expect(lines).toContain('  dashboard: no link (HTTP 503: "no dashboard here")');
    expect(lines.join("\n")).toContain('dashboard: no link (HTTP 503: "no dashboard here"; `edgeload dashboard r1` to try again)');
  });

  it("in CI prints the page without a sign-in link, and asks the API for none unless EDGELOAD_VIEW_LINKS=1", async () => {
    const view = { id: "r1", status: "passed", progress: { elapsedS: 2, durationS: 2, fraction: 1 } };
    const asked: string[] = [];
    server = await startServer((req) => {
      asked.push(req.path);
      if (req.method === "POST" && req.path === "/v1/runs")
        return { status: 201, body: { id: "r1", status: "pending", startsAt: "now", plan: { shards: [{ index: 0, region: "wnam" }], notes: [] }, links: {} } };
      if (req.path === "/v1/runs/r1") return { status: 200, body: view };
      if (req.path === "/v1/runs/r1/summary") return { status: 200, body: summaryOf("https://auth.example.com") };
      if (req.path === "/v1/dashboard-links") return { status: 201, body: { url: `${server!.url}/v1/runs/r1/dashboard?view=grant`, expiresAt: "soon" } };
      return { status: 404, body: {} };
    });
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
    vi.stubEnv("CI", "true");
    await submitAndFollow(new EdgeloadClient(server.url, "t"), { target: "https://auth.example.com" }, { quiet: true });
    expect(asked).not.toContain("/v1/dashboard-links");
    expect(lines.join("\n")).not.toContain("view=");
    expect(lines).toContain(`  dashboard: ${server.url}/v1/runs/r1/dashboard   (no sign-in link in CI logs: \`edgeload dashboard r1\` prints one)`);
    lines.length = 0;
    vi.stubEnv("EDGELOAD_VIEW_LINKS", "1");
    await submitAndFollow(new EdgeloadClient(server.url, "t"), { target: "https://auth.example.com" }, { quiet: true });
    vi.unstubAllEnvs();
    expect(lines.join("\n")).toContain("view=grant");
  });
});

describe("printsViewLinks", () => {
  it.each([
    [{}, true],
    [{ CI: "true" }, false],
    [{ CI: "1" }, false],
    [{ CI: "false" }, true],
    [{ CI: "true", EDGELOAD_VIEW_LINKS: "1" }, true],
  ])("%j → %s", (env, prints) => {
    expect(printsViewLinks(env)).toBe(prints);
  });
});
