/**
 * The real Prometheus the export tests start (Debian's `prometheus`, or PROMETHEUS_BIN): where
 * it is, a free loopback port for it, and stopping it. Without the binary a test skips, saying
 * why — or fails under CI (test/support/required-binaries.ts); .ci/run installs it.
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import { createServer } from "node:net";
import type { Found } from "../support/required-binaries.ts";

export const PROMETHEUS = process.env.PROMETHEUS_BIN ?? "prometheus";

export function findPrometheus(): Found {
  if (spawnSync(PROMETHEUS, ["--version"]).status === 0) return { path: PROMETHEUS };
  return { path: null, reason: `no \`${PROMETHEUS}\` binary (apt-get install prometheus, or set PROMETHEUS_BIN)` };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Stops a started Prometheus and removes its TSDB folder. */
export async function stopPrometheus(prometheus: ChildProcess | undefined, tsdbDir: string | undefined): Promise<void> {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus.once("exit", resolve));
    prometheus.kill("SIGTERM");
    await exited;
  }
  if (tsdbDir) await rm(tsdbDir, { recursive: true, force: true });
}
