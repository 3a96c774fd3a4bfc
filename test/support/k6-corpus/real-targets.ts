/**
 * The real applications the public k6 corpus (test/e2e/k6-corpus.test.ts) runs against where
 * one installs here from a package registry: installed once under .cache/, then started and
 * stopped by the test on loopback. A hand-written look-alike (targets.ts) shares our own
 * assumptions about the wire (it never branched on a Content-Type), so where the real program
 * can run, the scripts meet it instead (issue 53).
 *
 * Today that is httpbin: httpbin.org's own program, the Flask application published on PyPI as
 * `httpbin`, installed with pinned versions into a virtualenv in .cache/httpbin (about 15 s,
 * once). go-httpbin (the Go module proxy's) was tried first and left: it answers in another JSON
 * shape (every args, form and headers value a list), so k6's examples' checks written against
 * httpbin.org (`r.json().form.name === "Test Name"`) fail under both tools and test nothing.
 * QuickPizza, test.k6.io and test-api.k6.io keep their look-alikes: none of them is published
 * on a registry this project installs from (LOOK_ALIKES says so in docs/k6.md's table).
 *
 *   node test/support/k6-corpus/real-targets.ts    # install them now (as .ci/run does)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { PROJECT_ROOT } from "../../../cli/paths.ts";
import type { Found } from "../required-binaries.ts";

/** httpbin and every package it runs on, pinned, so each machine serves the same answers. */
export const HTTPBIN_REQUIREMENTS = [
  "httpbin==0.10.4",
  "Flask==3.1.3",
  "Werkzeug==3.1.9",
  "Jinja2==3.1.6",
  "MarkupSafe==3.0.4",
  "itsdangerous==2.2.0",
  "click==8.5.1",
  "blinker==1.9.0",
  "brotlicffi==1.2.1.0",
  "cffi==2.1.1",
  "pycparser==3.12",
  "decorator==5.3.2",
  "greenlet==2.0.2",
  "six==1.17.0",
] as const;

const HTTPBIN_DIR = join(PROJECT_ROOT, ".cache", "httpbin");
const VENV_PYTHON = join(HTTPBIN_DIR, "venv", "bin", "python");
/** The requirements the virtualenv was made with: a change of pins makes it again. */
const STAMP = join(HTTPBIN_DIR, "installed.txt");

/** The services still played by targets.ts (by the host a script names), and why their real program does not run here. */
export const LOOK_ALIKES: Readonly<Record<string, { readonly service: string; readonly why: string }>> = {
  "quickpizza.grafana.com": {
    service: "QuickPizza",
    why: "QuickPizza, with the test.k6.io pages it hosts: its Go source is published on GitHub only, not on the Go module proxy",
  },
  "test-api.k6.io": { service: "test-api.k6.io", why: "test-api.k6.io: a Django app published on GitHub only, not on PyPI" },
  "test.k6.io": { service: "test.k6.io", why: "test.k6.io: PHP pages published on GitHub only, and PHP is not installed here" },
  "test.staging.k6.io": { service: "test.k6.io", why: "test.k6.io: PHP pages published on GitHub only, and PHP is not installed here" },
  "localhost:10000": { service: "echo WebSocket", why: "xk6-websockets' local echo server: a Go program of its Makefile, with no release" },
  "echo.websocket.org": { service: "echo WebSocket", why: "echo.websocket.org: a hosted service with no published program" },
  "localhost:8080": { service: "k6's localhost site", why: "k6's localhost example: a site it assumes, with no program" },
};

/** The httpbin release installed, as the docs name it: "httpbin 0.10.4". */
export const HTTPBIN_RELEASE = HTTPBIN_REQUIREMENTS[0].replace("==", " ");

const installed = () => existsSync(VENV_PYTHON) && existsSync(STAMP) && readFileSync(STAMP, "utf8") === HTTPBIN_REQUIREMENTS.join("\n");

/** Test files collected at once install httpbin once: the others wait for this file to go. */
const LOCK = join(PROJECT_ROOT, ".cache", "httpbin-install.lock");
/** A lock older than this was left by a process that died. */
const STALE_LOCK_MS = 5 * 60_000;
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function install(): Found {
  console.log("installing httpbin (PyPI, pinned) into .cache/httpbin/venv (about 15 s)…");
  try {
    rmSync(HTTPBIN_DIR, { recursive: true, force: true });
    mkdirSync(HTTPBIN_DIR, { recursive: true });
    execFileSync("python3", ["-m", "venv", join(HTTPBIN_DIR, "venv")], { stdio: "inherit" });
    execFileSync(VENV_PYTHON, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...HTTPBIN_REQUIREMENTS], { stdio: "inherit" });
    writeFileSync(STAMP, HTTPBIN_REQUIREMENTS.join("\n"));
  } catch (error) {
    return { path: null, reason: `could not install httpbin from PyPI into .cache/httpbin (needs python3 with venv): ${(error as Error).message}` };
  }
  return { path: VENV_PYTHON };
}

/**
 * httpbin's Python, once the pinned virtualenv exists; with `install`, makes it first (python3
 * -m venv, then pip from PyPI), at most once across test files. Without it, or when that
 * fails, why there is none.
 */
export function findHttpbin(options: { install: boolean }): Found {
  if (installed()) return { path: VENV_PYTHON };
  if (!options.install) return { path: null, reason: "httpbin is not installed in .cache/httpbin (node test/support/k6-corpus/real-targets.ts installs it)" };
  mkdirSync(dirname(LOCK), { recursive: true });
  if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { force: true });
  let lock: number;
  try {
    lock = openSync(LOCK, "wx");
  } catch {
    while (existsSync(LOCK)) sleepSync(500);
    return installed() ? { path: VENV_PYTHON } : { path: null, reason: "another process's install of httpbin into .cache/httpbin failed" };
  }
  try {
    return install();
  } finally {
    closeSync(lock);
    rmSync(LOCK, { force: true });
  }
}

export interface RealTarget {
  /** http://127.0.0.1:port */
  readonly origin: string;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 now (httpbin's command line takes no port 0). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => probe.once("error", reject).listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no TCP port for httpbin");
  return address.port;
}

/**
 * Flask's own server, threaded (k6's VUs keep connections open at once), with Werkzeug's line
 * per request silenced: the corpus sends thousands, and they would cost the 2-core machine.
 */
const SERVE = `import logging, sys
logging.getLogger("werkzeug").setLevel(logging.ERROR)
from httpbin.core import app
app.run(host="127.0.0.1", port=int(sys.argv[1]), threaded=True)`;

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Waits until `url` answers 200, or the process ends, or `timeoutMs` passes. */
async function answers(url: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited(child)) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).status === 200) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await gone;
  clearTimeout(killer);
}

/**
 * Starts httpbin with `python` (findHttpbin's) on 127.0.0.1 at a free port; another port is
 * tried when one was taken in between. Fails with httpbin's last output when it will not start.
 */
export async function startHttpbin(python: string): Promise<RealTarget> {
  let told = "";
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const child = spawn(python, ["-c", SERVE, String(port)], { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.on("data", (chunk: Buffer) => {
      told = (told + chunk.toString("utf8")).slice(-2000);
    });
    const origin = `http://127.0.0.1:${port}`;
    if (await answers(`${origin}/get`, child, 20_000)) return { origin, stop: () => stopProcess(child) };
    await stopProcess(child);
  }
  throw new Error(`httpbin (${python}) did not answer on 127.0.0.1 after 3 tries; it said:\n${told}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const found = findHttpbin({ install: true });
  if (found.path === null) {
    console.error(found.reason);
    process.exit(1);
  }
  console.log(`httpbin: ${found.path}`);
}
