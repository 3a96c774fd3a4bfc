/**
 * The local stack: the coordinator Worker (RunCoordinator and LoadShard Durable Objects,
 * local D1 and R2) and the target Worker, started in workerd through wrangler's
 * programmatic API (`unstable_startWorker`) on loopback ports. State persists under
 * `.edgeload/state`, so local runs can be read again after the stack restarts.
 *
 * The same function serves `edgeload dev`, `edgeload demo`, the end-to-end tests and the
 * benchmark, so all of them exercise the stack exactly as a user starts it.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { unstable_splitSqlQuery, unstable_startWorker } from "wrangler";
import { buildDashboardAssets } from "../scripts/build/dashboard-assets.mjs";
import { DEV_FILE, type DevFile, type TargetClient } from "./dev-file.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { workerdDescendants } from "./processes.ts";

export { PROJECT_ROOT };

export interface StackOptions {
  /**
   * Where local D1/R2/DO state lives. false: nothing is kept — a fresh directory in memory
   * (tmpfs, /dev/shm) where the machine has one, else in the temp dir, removed at stop().
   * Benchmarks use it: every window a shard stores and every flush the coordinator logs is a
   * SQLite commit, and on a disk those commits held the one thread the stack runs on.
   */
  readonly persist?: string | false;
  readonly apiPort?: number;
  readonly targetPort?: number;
  /** Write `.edgeload/dev.json` so other commands find this stack. */
  readonly writeDevFile?: boolean;
  /** Extra vars for the coordinator (e.g. lower caps in tests). */
  readonly vars?: Record<string, string>;
  readonly logLevel?: "none" | "error" | "warn" | "info" | "log" | "debug";
  /** Open the coordinator's DevTools inspector on this loopback port (profiling). */
  readonly coordinatorInspectorPort?: number;
}

/** Where the load-test client's codes are "sent": never followed, only parsed from Location. */
const LOAD_TEST_REDIRECT_URI = "http://127.0.0.1/callback";

/** A fresh directory for state nobody keeps: in memory (tmpfs) where the machine has one, else in the temp dir. */
export function ephemeralStateDir(prefix: string): Promise<string> {
  return mkdtemp(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), prefix));
}

export interface LocalStack {
  readonly apiUrl: string;
  /**
   * The coordinator's own workerd socket, without wrangler's dev proxy (which runs in this
   * Node process): benchmarks that hold many connections use it, so what they measure is
   * the coordinator's work alone.
   */
  readonly apiDirectUrl: string;
  /**
   * The target's own workerd socket. Load goes here rather than through wrangler's dev
   * proxy, which would add a second workerd hop (and more CPU than the target itself) to
   * every request; the proxy URL stays available for humans on a fixed port.
   */
  readonly targetUrl: string;
  /** The target through wrangler's dev proxy (fixed port with `edgeload dev`). */
  readonly targetProxyUrl: string;
  /** The target's ADMIN_API_SECRET, generated per stack (local only). */
  readonly targetAdminSecret: string;
  /** A load-test client registered on the target at start (local only). */
  readonly targetClient: TargetClient;
  readonly token: string;
  /** workerd process ids per worker (Linux), for CPU accounting in benchmarks. */
  readonly processes: { readonly target: readonly number[]; readonly coordinator: readonly number[] };
  /**
   * The coordinator's results database through Miniflare's D1 proxy, for benchmarks that
   * fill it with synthetic runs (see scripts/bench/query-timing.ts).
   */
  readonly resultsDatabase: () => Promise<D1Like>;
  /**
   * Fires the coordinator's cron trigger once, as Cloudflare does every minute deployed
   * (Miniflare does not fire crons by itself): the schedules' tick, at `scheduledTimeMs`.
   */
  readonly tick: (scheduledTimeMs?: number) => Promise<void>;
  readonly stop: () => Promise<void>;
}

/**
 * How wrangler runs a local stack here (each only when the caller's environment has not
 * said otherwise):
 * - it must not phone home: these machines are offline;
 * - without its local observability collector (`X_LOCAL_OBSERVABILITY`, on by default in
 *   wrangler 4.164), a streaming tail that reports every event of every Worker to a
 *   collector Worker in the same workerd, on the thread the shards send from. `perf` put
 *   it at 10–13% of that process's CPU during a run; turning it off took a status request
 *   from 4.0 to 1.7 ms of CPU and a 4-shard run at 20/s from ~59 to ~42 ms of CPU a second.
 *   edgeload does not read it (its own figures come from the shards).
 */
export function localWranglerEnv(): void {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.WRANGLER_LOG ??= "warn";
  process.env.X_LOCAL_OBSERVABILITY ??= "false";
}

export async function startLocalStack(options: StackOptions = {}): Promise<LocalStack> {
  localWranglerEnv();
  const ephemeral = options.persist === false ? await ephemeralStateDir("edgeload-state-") : null;
  const persist = ephemeral ?? (options.persist || join(PROJECT_ROOT, ".edgeload", "state"));
  await mkdir(persist, { recursive: true });
  const removeEphemeral = () => (ephemeral ? rm(ephemeral, { recursive: true, force: true }) : Promise.resolve());
  const token = randomBytes(24).toString("base64url");
  const targetAdminSecret = randomBytes(24).toString("base64url");
  let targetClient: TargetClient = { clientId: "", clientSecret: "", redirectUri: LOAD_TEST_REDIRECT_URI };
  const logLevel = options.logLevel ?? "warn";
  const dev = (port: number | undefined, inspectorPort?: number) => ({
    server: { hostname: "127.0.0.1", port: port ?? 0 },
    inspector: inspectorPort ? { hostname: "127.0.0.1", port: inspectorPort } : (false as const),
    watch: false,
    logLevel,
    persist,
  });

  buildDashboardAssets(); // wrangler's [build] does it too; the stack does not rely on that
  flushPendingWrites();
  const before = new Set(workerdDescendants());
  const target = await unstable_startWorker({
    config: join(PROJECT_ROOT, "workers/target/wrangler.toml"),
    bindings: { ADMIN_API_SECRET: { type: "plain_text", value: targetAdminSecret } },
    dev: dev(options.targetPort),
  });
  let coordinator: Awaited<ReturnType<typeof unstable_startWorker>> | undefined;
  try {
    await waitHealthy(target);
    await applyLocalMigrations(target, "TARGET_DB", join(PROJECT_ROOT, "workers/target/migrations"));
    targetClient = await provisionTarget(target, targetAdminSecret);
    for (const pid of workerdDescendants()) before.add(pid);
    const vars: Record<string, string> = { EDGELOAD_MODE: "local", ...options.vars, EDGELOAD_API_TOKEN: token };
    coordinator = await unstable_startWorker({
      config: join(PROJECT_ROOT, "wrangler.toml"),
      bindings: Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { type: "plain_text" as const, value: v }])),
      dev: dev(options.apiPort, options.coordinatorInspectorPort),
    });
    await waitHealthy(coordinator);
    await applyLocalMigrations(coordinator, "DB", join(PROJECT_ROOT, "coordinator/migrations"));
  } catch (error) {
    await Promise.allSettled([target.dispose(), coordinator?.dispose()]);
    await removeEphemeral();
    throw error;
  }
  const targetPids = workerdDescendants().filter((p) => before.has(p));
  const coordinatorPids = workerdDescendants().filter((p) => !before.has(p));
  const apiUrl = (await coordinator.url).origin;
  const apiDirectUrl = (await runtimeOf(coordinator).ready).origin;
  const targetProxyUrl = (await target.url).origin;
  const targetUrl = (await runtimeOf(target).ready).origin;
  const worker = coordinator;
  if (options.writeDevFile) {
    const file: DevFile = { apiUrl, targetUrl, targetProxyUrl, targetAdminSecret, targetClient, token, pid: process.pid, startedAt: new Date().toISOString() };
    await mkdir(dirname(DEV_FILE), { recursive: true });
    await writeFile(DEV_FILE, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
    // wrangler's own signal handling may end the process before stop() runs.
    process.once("exit", () => rmSync(DEV_FILE, { force: true }));
  }
  let stopped = false;
  return {
    apiUrl,
    apiDirectUrl,
    targetUrl,
    targetProxyUrl,
    targetAdminSecret,
    targetClient,
    token,
    processes: { target: targetPids, coordinator: coordinatorPids },
    resultsDatabase: () => runtimeOf(worker).getD1Database("DB"),
    tick: async (scheduledTimeMs = Date.now()) => {
      const result = await (await runtimeOf(worker).getWorker()).scheduled({ cron: "* * * * *", scheduledTime: new Date(scheduledTimeMs) });
      if (result.outcome !== "ok") throw new Error(`the coordinator's cron tick ended ${result.outcome} (see its log)`);
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled([worker.dispose(), target.dispose()]);
      await removeEphemeral();
      if (options.writeDevFile) await rm(DEV_FILE, { force: true });
    },
  };
}

type StartedWorker = Awaited<ReturnType<typeof unstable_startWorker>>;

/**
 * Makes the local target ready for seeding and for all six scenarios, as docs/authrim.md
 * has an operator set up a real Authrim: a signing key (created once, kept in persisted
 * state), a fresh trusted load-test client that skips consent and may exchange its own
 * subjects' tokens, token exchange on, and strict introspection validation on. The target
 * refuses each of these by default, as Authrim does.
 */
async function provisionTarget(target: StartedWorker, adminSecret: string): Promise<TargetClient> {
  const base = (await target.url).origin;
  const admin = (path: string, init: RequestInit = {}) =>
    target.fetch(base + path, { ...init, headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" } } as never);
  const key = await admin("/api/admin/test/signing-key");
  await key.text();
  if (key.status === 404) await (await admin("/api/admin/signing-keys/rotate", { method: "POST" })).text();
  const response = await admin("/api/admin/clients", {
    method: "POST",
    body: JSON.stringify({
      client_name: "edgeload load test",
      redirect_uris: [LOAD_TEST_REDIRECT_URI],
      scope: "openid profile email",
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
      is_trusted: true,
      skip_consent: true,
    }),
  });
  if (response.status !== 201) throw new Error(`could not register the load-test client on the target: ${response.status} ${await response.text()}`);
  const { client } = (await response.json()) as { client: { client_id: string; client_secret: string } }; // Authrim's shape
  // On Authrim these two are set on the client's D1 row; the target takes them by PUT.
  const exchanger = { token_exchange_allowed: true, allowed_subject_token_clients: [client.client_id] };
  const settings: Array<[string, string, unknown]> = [
    ["the load-test client's token-exchange flags", `/api/admin/clients/${client.client_id}`, exchanger],
    ["token exchange on", "/api/admin/settings/token-exchange", { enabled: true }],
  ];
  for (const [what, path, body] of settings) {
    const answer = await admin(path, { method: "PUT", body: JSON.stringify(body) });
    if (answer.status !== 200) throw new Error(`could not set ${what} on the target: ${answer.status} ${await answer.text()}`);
    await answer.text();
  }
  // Like Authrim, the target checks audience and client on /introspect only once strict
  // validation is on (docs/authrim.md): an operator turns it on before load-testing.
  const strict = await admin("/api/admin/settings/introspection-validation", { method: "PUT", body: JSON.stringify({ strictValidation: true }) });
  if (strict.status !== 200) throw new Error(`could not turn strict introspection validation on: ${strict.status} ${await strict.text()}`);
  await strict.text();
  return { clientId: client.client_id, clientSecret: client.client_secret, redirectUri: LOAD_TEST_REDIRECT_URI };
}

/** Waits for /healthz to answer; wrangler starts the runtime on the first request. */
async function waitHealthy(worker: StartedWorker): Promise<void> {
  await worker.ready;
  const url = new URL("/healthz", await worker.url);
  const response = await worker.fetch(url.href);
  const text = await response.text();
  if (!response.ok) throw new Error(`${url.href} answered ${response.status}: ${text.slice(0, 200)}`);
}

/**
 * Applies a worker's migrations to its local D1, recording them in `d1_migrations` the
 * way `wrangler d1 migrations apply --local` does, so both stay interchangeable. The
 * database comes from the worker's Miniflare instance, as wrangler's own test harness
 * gets it (there is no public accessor on startWorker's handle yet).
 */
async function applyLocalMigrations(worker: StartedWorker, binding: string, dir: string): Promise<void> {
  const db = await runtimeOf(worker).getD1Database(binding);
  await db
    .prepare(
      "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
    )
    .run();
  const applied = new Set((await db.prepare("SELECT name FROM d1_migrations").all<{ name: string }>()).results.map((r) => r.name));
  for (const name of (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort()) {
    if (applied.has(name)) continue;
    const statements = unstable_splitSqlQuery(await readFile(join(dir, name), "utf8"));
    await db.batch([...statements.map((s) => db.prepare(s)), db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(name)]);
  }
}

/**
 * Has the kernel write out what is pending before workerd starts. Right after `npm install`
 * hundreds of MB are still waiting to be written; the local D1 and Durable Object storage
 * (SQLite) then wait behind that writeback, and the first run's tail shows it: measured on
 * a fresh clone, `npm install && npm run demo` gave a userinfo p99 of 353–493 ms (thresholds
 * failed) with ~470 MB dirty, and 96 ms after a `sync`. Costs milliseconds when nothing is pending.
 */
function flushPendingWrites(): void {
  if (process.platform === "win32") return;
  try {
    execFileSync("sync", { stdio: "ignore", timeout: 60_000 });
  } catch {
    // No sync(1) here: the run goes on, only less quiet.
  }
}

interface LocalRuntime {
  /** Resolves to the URL of the worker's own socket (no dev proxy in between). */
  readonly ready: Promise<URL>;
  getD1Database(binding: string): Promise<D1Like>;
  getWorker(): Promise<{ scheduled(options: { cron: string; scheduledTime: Date }): Promise<{ outcome: string }> }>;
}

/**
 * The Miniflare instance behind a started worker, as wrangler's own test harness reaches
 * it (startWorker's handle has no public accessor for it yet). Exists once the worker has
 * served its first request (see waitHealthy).
 */
function runtimeOf(worker: StartedWorker): LocalRuntime {
  const mf = (worker.raw as unknown as { runtimes: Array<{ mf?: LocalRuntime }> }).runtimes[0]?.mf;
  if (!mf) throw new Error("wrangler did not expose the local runtime of a started worker");
  return mf;
}

export interface D1Like {
  prepare(sql: string): { run(): Promise<unknown>; all<T>(): Promise<{ results: T[] }>; bind(...v: unknown[]): unknown };
  batch(statements: unknown[]): Promise<unknown>;
}
