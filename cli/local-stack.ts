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
import { DEV_FILE, type DevFile, type TargetClient } from "./dev-file.ts";
import { useLocalChromium } from "./local-chromium.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { workerdDescendants } from "./processes.ts";
import { provisionTarget } from "./target-provisioning.ts";

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
  // k6/browser's sessions start Debian's Chromium from this process (cli/local-chromium.ts).
  useLocalChromium();
  const ephemeral = options.persist === false ? await ephemeralStateDir("edgeload-state-") : null;
  const persist = ephemeral ?? (options.persist || join(PROJECT_ROOT, ".edgeload", "state"));
  await mkdir(persist, { recursive: true });
  const removeEphemeral = () => (ephemeral ? rm(ephemeral, { recursive: true, force: true }) : Promise.resolve());
  const token = randomBytes(24).toString("base64url");
  const targetAdminSecret = randomBytes(24).toString("base64url");

  buildDashboardAssets(); // wrangler's [build] does it too; the stack does not rely on that
  flushPendingWrites();
  const { target, coordinator, targetClient, processes } = await startWorkers(options, persist, { token, targetAdminSecret }, removeEphemeral);
  const apiUrl = (await coordinator.url).origin;
  const apiDirectUrl = (await runtimeOf(coordinator).ready).origin;
  const targetProxyUrl = (await target.url).origin;
  const targetUrl = (await runtimeOf(target).ready).origin;
  if (options.writeDevFile) {
    await writeStackDevFile({
      apiUrl,
      targetUrl,
      targetProxyUrl,
      targetAdminSecret,
      targetClient,
      token,
      pid: process.pid,
      startedAt: new Date().toISOString(),
    });
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
    processes,
    resultsDatabase: () => runtimeOf(coordinator).getD1Database("DB"),
    tick: async (scheduledTimeMs = Date.now()) => {
      const result = await (await runtimeOf(coordinator).getWorker()).scheduled({ cron: "* * * * *", scheduledTime: new Date(scheduledTimeMs) });
      if (result.outcome !== "ok") throw new Error(`the coordinator's cron tick ended ${result.outcome} (see its log)`);
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await Promise.allSettled([coordinator.dispose(), target.dispose()]);
      await removeEphemeral();
      if (options.writeDevFile) await rm(DEV_FILE, { force: true });
    },
  };
}

type StartedWorker = Awaited<ReturnType<typeof unstable_startWorker>>;

/** Both Workers of a started stack, the client provisioned on the target, and whose workerd processes are whose. */
interface StartedWorkers {
  readonly target: StartedWorker;
  readonly coordinator: StartedWorker;
  readonly targetClient: TargetClient;
  readonly processes: LocalStack["processes"];
}

/**
 * Starts the target (healthy, migrated, provisioned) and then the coordinator (healthy,
 * migrated). When either fails after the target started, both are disposed of and
 * `onFailure` runs before the error goes on.
 */
async function startWorkers(
  options: StackOptions,
  persist: string,
  secrets: { readonly token: string; readonly targetAdminSecret: string },
  onFailure: () => Promise<unknown>,
): Promise<StartedWorkers> {
  const logLevel = options.logLevel ?? "warn";
  const dev = (port: number | undefined, inspectorPort?: number) => ({
    server: { hostname: "127.0.0.1", port: port ?? 0 },
    inspector: inspectorPort ? { hostname: "127.0.0.1", port: inspectorPort } : (false as const),
    watch: false,
    logLevel,
    persist,
  });
  const before = new Set(workerdDescendants());
  const target = await unstable_startWorker({
    config: join(PROJECT_ROOT, "workers/target/wrangler.toml"),
    bindings: { ADMIN_API_SECRET: { type: "plain_text", value: secrets.targetAdminSecret } },
    dev: dev(options.targetPort),
  });
  let coordinator: StartedWorker | undefined;
  let targetClient: TargetClient;
  try {
    await waitHealthy(target);
    await applyLocalMigrations(target, "TARGET_DB", join(PROJECT_ROOT, "workers/target/migrations"));
    targetClient = await provisionTarget(target, secrets.targetAdminSecret);
    for (const pid of workerdDescendants()) before.add(pid);
    const vars: Record<string, string> = { EDGELOAD_MODE: "local", ...options.vars, EDGELOAD_API_TOKEN: secrets.token };
    coordinator = await unstable_startWorker({
      config: join(PROJECT_ROOT, "wrangler.toml"),
      bindings: Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { type: "plain_text" as const, value: v }])),
      dev: dev(options.apiPort, options.coordinatorInspectorPort),
    });
    await waitHealthy(coordinator);
    await applyLocalMigrations(coordinator, "DB", join(PROJECT_ROOT, "coordinator/migrations"));
  } catch (error) {
    await Promise.allSettled([target.dispose(), coordinator?.dispose()]);
    await onFailure();
    throw error;
  }
  const processes = {
    target: workerdDescendants().filter((p) => before.has(p)),
    coordinator: workerdDescendants().filter((p) => !before.has(p)),
  };
  return { target, coordinator, targetClient, processes };
}

/** Writes `.edgeload/dev.json`, so other commands find this stack, and removes it when the process exits. */
async function writeStackDevFile(file: DevFile): Promise<void> {
  await mkdir(dirname(DEV_FILE), { recursive: true });
  await writeFile(DEV_FILE, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
  // wrangler's own signal handling may end the process before stop() runs.
  process.once("exit", () => rmSync(DEV_FILE, { force: true }));
}

/**
 * Runs the dashboard's asset build (scripts/build/dashboard-assets.mjs) as the build step it
 * is, in a Node process of its own, as wrangler's [build] runs it: the CLI does not import
 * the build. Its stderr is kept, so a failed build fails the start with the build's own message.
 */
function buildDashboardAssets(): void {
  execFileSync(process.execPath, [join(PROJECT_ROOT, "scripts/build/dashboard-assets.mjs")], { cwd: PROJECT_ROOT, stdio: ["ignore", "ignore", "pipe"] });
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
