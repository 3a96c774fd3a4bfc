/**
 * Where the generator's CPU goes: runs one constant-arrival-rate run on the local stack with
 * the coordinator's DevTools inspector open, records a V8 CPU profile of its isolate (every
 * shard and the coordinator share it locally) for the run's steady part, and prints the
 * functions and files with the most self time, then each second's p95 and client delay beside
 * the time each piece of the shard's bookkeeping took in it (profile-attribution.ts). The profile is written next to the output
 * so it can be opened in Chrome DevTools or speedscope.
 *
 *   npm run bench -- --only profile [--rates 500] [--duration 10s] [--delay 20] [--shards N]
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EdgeloadClient } from "../../cli/client.ts";
import { startLocalStack, PROJECT_ROOT } from "../../cli/local-stack.ts";
import { benchRegions, runBySecond } from "./generator-clients.ts";
import { bookkeepingBySecond, PIECES } from "./profile-attribution.ts";
import { markdownTable } from "./markdown-table.ts";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
    readonly columnNumber: number;
    readonly scriptId: string;
  };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** A DevTools protocol session over the inspector's WebSocket. */
async function devtools(inspectorPort: number): Promise<{ send: (method: string, params?: object) => Promise<any>; close: () => void }> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as Array<{ webSocketDebuggerUrl: string; title?: string }>;
  const target = targets.find((t) => /edgeload|core:user/.test(t.title ?? "")) ?? targets[0];
  if (!target) throw new Error(`no inspector target on port ${inspectorPort}`);
  // wrangler's inspector proxy takes only DevTools origins; a script names localhost.
  const socket = new WebSocket(target.webSocketDebuggerUrl, { headers: { Origin: "http://localhost" } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = (e) => reject(new Error(`inspector: ${(e as ErrorEvent).message}`));
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data));
    const waiting = message.id ? pending.get(message.id) : undefined;
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  };
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * The sampling interval asked for, and the most one sample may count for (see selfTimes).
 * workerd delivers samples far less often than asked (deltas of ~25 ms are common), so the
 * table gives shares of the sampled time, not absolute CPU: `npm run bench -- generator`
 * measures that from /proc.
 */
const SAMPLING_US = 200;
const MAX_SAMPLE_US = 50_000;

/** Self time per function (name, file:line) and per file, in ms, largest first. */
export function selfTimes(
  profile: CpuProfile,
  sourceOf: (frame: ProfileNode["callFrame"]) => string = () => "",
): { byFunction: Array<[string, number]>; byFile: Array<[string, number]>; totalMs: number } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // workerd's sampler stops while the isolate waits: the sample after a pause carries the
  // whole pause (up to a second) as its delta. Count at most MAX_SAMPLE_US per sample.
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + Math.min(profile.timeDeltas[i] ?? 0, MAX_SAMPLE_US)));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)!.callFrame;
    const file = frame.url ? frame.url.replace(/^.*\/(?=[^/]+\/[^/]+$)/, "") : frame.functionName === "(idle)" ? "(idle)" : "(native)";
    const name = `${frame.functionName || `(anonymous: ${sourceOf(frame)})`} ${file}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
    totalUs += us;
  }
  const sorted = (m: Map<string, number>) => [...m].map(([k, us]) => [k, us / 1000] as [string, number]).sort((a, b) => b[1] - a[1]);
  return { byFunction: sorted(byFunction), byFile: sorted(byFile), totalMs: totalUs / 1000 };
}

export async function engineProfile(options: { rate: number; duration: string; delayMs: number; shards: number | null }): Promise<void> {
  const inspectorPort = 9300 + Math.floor(Math.random() * 500);
  const stack = await startLocalStack({ persist: false, coordinatorInspectorPort: inspectorPort });
  try {
    const path = `/delay?ms=${options.delayMs}`;
    await (await fetch(stack.targetUrl + path)).arrayBuffer();
    const session = await devtools(inspectorPort);
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    await session.send("Profiler.enable");
    await session.send("Profiler.setSamplingInterval", { interval: SAMPLING_US });
    const run = await client.createRun({
      name: "profile",
      target: stack.targetUrl,
      steps: [{ path }],
      executor: "constant-arrival-rate",
      rate: options.rate,
      duration: options.duration,
      ...(options.shards === null ? {} : { shards: options.shards }),
      regions: benchRegions(options.shards),
      maxVUs: Math.max(200, options.rate),
      timeout: "10s",
    });
    await session.send("Profiler.start");
    const profileStartMs = Date.now();
    await client.waitForEnd(run.id, () => {}, 1000);
    const { profile } = (await session.send("Profiler.stop")) as { profile: CpuProfile };
    // Anonymous functions are named by the start of their source (the bundle is temporary).
    await session.send("Debugger.enable");
    const sources = new Map<string, string[]>();
    for (const id of new Set(profile.nodes.map((n) => n.callFrame.scriptId).filter((id) => id && id !== "0"))) {
      try {
        sources.set(id, ((await session.send("Debugger.getScriptSource", { scriptId: id })) as { scriptSource: string }).scriptSource.split("\n"));
      } catch {
        /* a native or gone script */
      }
    }
    session.close();
    const sourceOf = (f: ProfileNode["callFrame"]) =>
      (sources.get(f.scriptId)?.[f.lineNumber] ?? "")
        .slice(f.columnNumber, f.columnNumber + 50)
        .replace(/\s+/g, " ")
        .replace(/\|/g, "/");
    const file = join(PROJECT_ROOT, ".cache", `engine-${options.rate}.cpuprofile`);
    await writeFile(file, JSON.stringify(profile));
    const s = await client.summary(run.id);
    const requests = (s.metrics as Record<string, any>).http_reqs.count as number;
    const { byFunction, byFile, totalMs } = selfTimes(profile, sourceOf);
    const idle = byFunction.filter(([k]) => k.startsWith("(idle)")).reduce((a, [, ms]) => a + ms, 0);
    const busy = totalMs - idle;
    console.log(
      `\n## Engine profile: ${options.rate}/s for ${options.duration}, ${options.shards ?? "planned"} shards, ${requests} requests; ${busy.toFixed(0)} ms of the isolate sampled (profile: ${file})\n`,
    );
    const share = (ms: number) => `${((ms / busy) * 100).toFixed(1)}%`;
    console.log(
      markdownTable(
        ["file", "sampled self ms", "share"],
        byFile
          .filter(([k]) => k !== "(idle)")
          .slice(0, 15)
          .map(([k, ms]) => [k, ms.toFixed(0), share(ms)]),
        new Set([0]),
      ),
    );
    console.log();
    console.log(
      markdownTable(
        ["function", "sampled self ms", "share"],
        byFunction
          .filter(([k]) => !k.startsWith("(idle)"))
          .slice(0, 30)
          .map(([k, ms]) => [k, ms.toFixed(0), share(ms)]),
        new Set([0]),
      ),
    );
    await printBySecond(stack, run.id, profile, Date.parse(s.edgeload.startedAt) - profileStartMs);
  } finally {
    await stack.stop();
  }
}

/**
 * Each second of the run: its p95 and largest client delay beside the sampled ms of each
 * piece of bookkeeping in it (profile-attribution.ts), so a slow second shows what ran in it.
 */
async function printBySecond(stack: Awaited<ReturnType<typeof startLocalStack>>, runId: string, profile: CpuProfile, offsetMs: number): Promise<void> {
  const { p95BySecond, clientDelayMaxBySecond } = await runBySecond(stack, runId);
  const seconds = bookkeepingBySecond(profile, offsetMs);
  const fixed = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "-" : x.toFixed(1));
  console.log(`\n### By second: the run's p95 and client delay, and the isolate's sampled ms in each piece\n`);
  console.log(
    markdownTable(
      ["second", "p95 ms", "client delay max ms", ...PIECES],
      p95BySecond.map((p95, t) => [String(t), fixed(p95), fixed(clientDelayMaxBySecond[t]), ...PIECES.map((piece) => fixed(seconds[t]?.[piece]))]),
      new Set([0]),
    ),
  );
}
