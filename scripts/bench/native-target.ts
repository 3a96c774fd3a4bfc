/**
 * The native loopback target (scripts/bench/native-target, Go's standard library only),
 * built once into .cache/native-target and started on a free 127.0.0.1 port. Against it
 * the target's time is the same for every client and costs almost no CPU, so what the
 * generator bench shows is the clients' own, without workerd on the serving side.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";

const SOURCE = join(PROJECT_ROOT, "scripts/bench/native-target");
const BINARY = join(PROJECT_ROOT, ".cache", "native-target", "delay-target");

export interface NativeTarget {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** CPU seconds the target has used so far (from /proc). */
  cpuS(): number;
  stop(): Promise<void>;
}

export async function startNativeTarget(): Promise<NativeTarget> {
  if (!existsSync(BINARY) || statSync(BINARY).mtimeMs < statSync(join(SOURCE, "main.go")).mtimeMs) {
    try {
      execFileSync("go", ["build", "-o", BINARY, "."], { cwd: SOURCE, stdio: "inherit", env: { ...process.env, GOFLAGS: "-mod=mod" } });
    } catch (error) {
      throw new Error(`could not build the native target (is Go installed?): ${(error as Error).message}`);
    }
  }
  // Its output is piped, not inherited: a target left running must not hold the bench's own
  // stdout open. And it goes when the bench goes, however that ends.
  const child = spawn(BINARY, ["-port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  const killWithBench = () => child.kill("SIGKILL");
  process.once("exit", killWithBench);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const address = await new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the native target exited (${code}) before listening: ${stderr.trim()}`)));
    createInterface({ input: child.stdout! }).once("line", (line) => resolve(line.replace(/^listening /, "")));
  });
  return {
    url: `http://${address}`,
    cpuS: () => cpuSeconds([child.pid!]),
    stop: async () => {
      process.off("exit", killWithBench);
      child.kill("SIGTERM");
      await exited;
    },
  };
}
