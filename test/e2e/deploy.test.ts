/**
 * `wrangler deploy`, then an HTTP trigger, as a new user meets them: the Worker is built
 * exactly as `wrangler deploy` builds it (`--dry-run --outdir`), and that built bundle is
 * served in workerd by wrangler's own API with empty state — no tables, no bucket objects,
 * only the secrets a user sets — and driven with plain HTTP, no CLI code.
 *
 * A change of secrets (`wrangler secret put`) deploys a new version over the same
 * resources; here that is the same bundle restarted with other bindings over the same
 * persisted state. The loopback target is listed in ALLOWED_TARGETS explicitly, as a
 * deployed edgeload allows nothing unlisted (EDGELOAD_MODE is "deployed", from the config).
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_startWorker } from "wrangler";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";
import { readWranglerConfig } from "../../cli/wrangler-config.ts";

/** The schema's migrations, each applied once (coordinator/migrations). */
const MIGRATIONS = readdirSync(join(PROJECT_ROOT, "coordinator", "migrations")).filter((f) => f.endsWith(".sql")).length;

const run = promisify(execFile);
/** Two deployments' API tokens: 32 characters at least, as a deployment requires. */
const TOKEN_1 = "deploy-test-token-one-0123456789abcdef";
const TOKEN_2 = "deploy-test-token-two-0123456789abcdef";
const WRANGLER = join(PROJECT_ROOT, "node_modules/.bin/wrangler");
const offline = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

type Worker = Awaited<ReturnType<typeof unstable_startWorker>>;

let outdir: string;
let configPath: string;
let target: Server;
let targetOrigin: string;

/** The built bundle's own config: wrangler.toml's bindings, the bundle as it was built. */
async function writeBundleConfig(): Promise<string> {
  const source = readWranglerConfig(join(PROJECT_ROOT, "wrangler.toml")) as unknown as Record<string, unknown> & {
    d1_databases: Array<Record<string, unknown>>;
  };
  const { build: _build, assets: _assets, main: _main, ...rest } = source;
  const config = {
    ...rest,
    main: "index.js",
    no_bundle: true,
    find_additional_modules: true,
    d1_databases: source.d1_databases.map((d) => ({ ...d, migrations_dir: join(PROJECT_ROOT, String(d.migrations_dir)) })),
  };
  const path = join(outdir, "wrangler.json");
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

async function serve(persist: string, secrets: Record<string, string>): Promise<{ worker: Worker; url: string }> {
  const bindings = { ...secrets, COLO_TRACE_URL: `${targetOrigin}/cdn-cgi/trace` };
  const worker = await unstable_startWorker({
    config: configPath,
    bindings: Object.fromEntries(Object.entries(bindings).map(([k, v]) => [k, { type: "secret_text" as const, value: v }])),
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, persist, logLevel: "warn" },
  });
  return { worker, url: (await worker.url).origin };
}

async function http(url: string, token: string | null, init: RequestInit = {}): Promise<{ status: number; body: any; type: string }> {
  const headers = new Headers(init.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  if (init.body) headers.set("content-type", "application/json");
  const response = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(90_000) });
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  return { status: response.status, type, body: type.includes("json") ? JSON.parse(text) : text };
}

const spec = (overrides: Record<string, unknown> = {}) => ({
  name: "deploy test",
  target: targetOrigin,
  steps: [{ path: "/ok", checks: [{ status: 200 }] }],
  executor: "constant-arrival-rate",
  rate: 10,
  duration: "2s",
  shards: 1,
  regions: ["wnam"],
  thresholds: { http_req_failed: ["rate<0.01"] },
  ...overrides,
});

/** `wrangler d1 migrations apply DB --local` on the state under `persist`, as a user runs it. */
async function wranglerMigrate(persist: string): Promise<string> {
  const { stdout } = await run(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist, "--config", configPath], {
    env: { ...offline, CI: "true" },
    cwd: outdir,
  });
  return stdout;
}

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), "edgeload-deploy-bundle-"));
  await run(WRANGLER, ["deploy", "--dry-run", "--outdir", outdir], { cwd: PROJECT_ROOT, env: offline });
  configPath = await writeBundleConfig();
  // The target also stands in for Cloudflare's /cdn-cgi/trace, which deployed shards read
  // their colo from (COLO_TRACE_URL), so nothing here looks up a name off this machine.
  target = createServer((request, response) => {
    if (request.url === "/cdn-cgi/trace") response.end("fl=1\nh=example\ncolo=TST\n");
    else setTimeout(() => response.end("ok"), 2);
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetOrigin = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
}, 180_000);

afterAll(async () => {
  target?.close();
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

describe("a fresh deployment, built by wrangler deploy and driven over plain HTTP", () => {
  let persist: string;
  let current: { worker: Worker; url: string } | undefined;
  const restart = async (secrets: Record<string, string>) => {
    await current?.worker.dispose();
    current = await serve(persist, secrets);
    return current.url;
  };
  beforeAll(async () => {
    persist = await mkdtemp(join(tmpdir(), "edgeload-deploy-state-"));
  });
  afterAll(async () => {
    await current?.worker.dispose();
    await rm(persist, { recursive: true, force: true });
  });

  let seedUrl: string;

  it("refuses every run while no target is allowed, and says how to allow one", async () => {
    const url = await restart({ EDGELOAD_API_TOKEN: TOKEN_1 });
    expect((await http(`${url}/healthz`, null)).body).toEqual({ ok: true, mode: "deployed" });

    const plan = await http(`${url}/v1/plan`, TOKEN_1, { method: "POST", body: JSON.stringify(spec()) });
    expect(plan.status).toBe(200);
    expect(plan.body.target).toEqual({
      url: targetOrigin,
      allowed: false,
      detail: expect.stringMatching(/^would be refused: this deployment has no allowed targets yet: .*npx wrangler secret put ALLOWED_TARGETS/),
    });

    const refused = await http(`${url}/v1/runs`, TOKEN_1, { method: "POST", body: JSON.stringify(spec()) });
    expect(refused.status).toBe(403);
    expect(refused.type).toContain("application/problem+json");
    expect(refused.body.detail).toContain("npx wrangler secret put ALLOWED_TARGETS");
  });

  it("runs against an allowed target and answers a CI job's blocking request with the verdict", async () => {
    const url = await restart({ EDGELOAD_API_TOKEN: TOKEN_1, ALLOWED_TARGETS: targetOrigin });
    expect((await http(`${url}/v1/plan`, TOKEN_1, { method: "POST", body: JSON.stringify(spec()) })).body.target).toEqual({
      url: targetOrigin,
      allowed: true,
    });

    const created = await http(`${url}/v1/runs?wait=60`, TOKEN_1, { method: "POST", body: JSON.stringify(spec()) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ status: "passed", done: true, thresholdsPassed: true, exitCode: 0 });
    const { id, links } = created.body as { id: string; links: Record<string, string> };
    expect(Object.keys(links).sort()).toEqual(["abort", "dashboard", "events", "report", "self", "summary", "timeseries"]);

    const summary = await http(links.summary!, TOKEN_1);
    expect(summary.body.metrics.http_reqs.count).toBe(20);
    const report = await http(links.report!, TOKEN_1);
    expect(report.status).toBe(200);
    expect(report.type).toContain("text/html");
    expect(report.body).toContain(id);
    const sql = await http(`${url}/v1/sql`, TOKEN_1, {
      method: "POST",
      body: JSON.stringify({ sql: "SELECT r.id, r.status, s.colo FROM runs r JOIN shards s ON s.run_id = r.id" }),
    });
    expect(sql.body.rows).toEqual([{ id, status: "passed", colo: "TST" }]);
  });

  it("gives a failed threshold k6's exit code 99, on a second run over the same schema", async () => {
    const url = current!.url;
    const created = await http(`${url}/v1/runs`, TOKEN_1, {
      method: "POST",
      // A count, not a time: a failed timing threshold under a saturated generator is inconclusive.
      body: JSON.stringify(spec({ thresholds: { http_reqs: ["count<1"] } })),
    });
    expect(created.status).toBe(201);
    expect(created.body.done).toBeUndefined(); // no ?wait: answered at once
    const waited = await http(`${created.body.links.self}?wait=60`, TOKEN_1);
    expect(waited.body).toMatchObject({ id: created.body.id, status: "failed", done: true, thresholdsPassed: false, exitCode: 99 });

    const migrations = await http(`${url}/v1/sql`, TOKEN_1, {
      method: "POST",
      body: JSON.stringify({ sql: "SELECT name, COUNT(*) AS n FROM d1_migrations GROUP BY name ORDER BY name" }),
    });
    expect(migrations.body.rows.map((r: { n: number }) => r.n)).toEqual(Array(MIGRATIONS).fill(1));
    expect(await wranglerMigrate(persist)).toMatch(/No migrations to apply/);
  });

  it("answers a bad ?wait with a problem naming it", async () => {
    const bad = await http(`${current!.url}/v1/runs/r-aaaaaaaa-00000000?wait=soon`, TOKEN_1);
    expect(bad.status).toBe(400);
    expect(bad.body.problems).toEqual([{ field: "wait", detail: 'got "soon"' }]);
  });

  it("keeps a seed URL handed to k6 valid when the API token is rotated", async () => {
    const url = current!.url;
    const seed = ["eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSJ9.c2ln", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MiJ9.c2ln"];
    const stored = await http(`${url}/v1/seeds/ci-tokens`, TOKEN_1, { method: "PUT", body: JSON.stringify(seed) });
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    seedUrl = (await http(`${url}/v1/seeds/ci-tokens/url`, TOKEN_1, { method: "POST", body: JSON.stringify({ expiresIn: "1h" }) })).body.url;
    const before = await http(seedUrl, null);
    expect(before.status).toBe(200);

    const rotated = await restart({ EDGELOAD_API_TOKEN: TOKEN_2, ALLOWED_TARGETS: targetOrigin });
    expect((await http(`${rotated}/v1/runs`, TOKEN_1)).status).toBe(401);
    const after = await http(seedUrl.replace(/^http:\/\/[^/]+/, rotated), null);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
  });
});

describe("a database migrated by wrangler first", () => {
  it("is taken as it is: the coordinator applies nothing twice and serves a run", async () => {
    const persist = await mkdtemp(join(tmpdir(), "edgeload-deploy-wrangler-first-"));
    let served: { worker: Worker; url: string } | undefined;
    try {
      expect(await wranglerMigrate(persist)).toMatch(/0007_settings\.sql/);
      served = await serve(persist, { EDGELOAD_API_TOKEN: TOKEN_1, ALLOWED_TARGETS: targetOrigin });
      const created = await http(`${served.url}/v1/runs?wait=60`, TOKEN_1, { method: "POST", body: JSON.stringify(spec()) });
      expect(created.body).toMatchObject({ status: "passed", exitCode: 0 });
      const migrations = await http(`${served.url}/v1/sql`, TOKEN_1, {
        method: "POST",
        body: JSON.stringify({ sql: "SELECT COUNT(*) AS n, COUNT(DISTINCT name) AS names FROM d1_migrations" }),
      });
      expect(migrations.body.rows).toEqual([{ n: MIGRATIONS, names: MIGRATIONS }]);
    } finally {
      await served?.worker.dispose();
      await rm(persist, { recursive: true, force: true });
    }
  });
});
