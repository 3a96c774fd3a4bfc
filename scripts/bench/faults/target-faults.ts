/**
 * Fault rows on the local stack, started as `edgeload dev` starts it: a target that fails,
 * hangs past the timeout, resets connections or answers with a 50 MB body — each run to its
 * end, stopped through the API, and stopped with Ctrl-C in a real `edgeload run` process.
 *
 * The workerd target counts what it receives in its request ledger; the two loopback
 * servers here (connection resets, huge bodies) count the requests they get themselves —
 * as the ledger does, those carrying the run's header: a shard's warm-up HEAD before t0
 * (workers/shard/warm-up.ts) is no request of the run.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PROJECT_ROOT, startLocalStack, type LocalStack } from "../../../cli/local-stack.ts";
import { EdgeloadClient } from "../../../cli/client.ts";
import { residentBytes } from "../../../cli/processes.ts";
import type { FaultObservation } from "./fault-table.ts";
import { RUN_HEADER } from "../../../core/run/protocol.ts";

const SHARDS = 2;
const STOP_AFTER_MS = 2_500;
const HUGE_BODY_BYTES = 50 * 1024 * 1024;

type Stop = "none" | "api" | "ctrl-c";

interface TargetFault {
  readonly name: string;
  readonly rate: number;
  readonly durationS: number;
  readonly timeoutS: number;
  /** The step's URL on the stack's target or a fault server. */
  readonly url: (stack: LocalStack, servers: FaultServers) => string;
  /** Requests the target side counted for the run (null: the workerd target's ledger). */
  readonly received?: (servers: FaultServers) => number;
  readonly note?: string;
}

/** Loopback servers for what the workerd target cannot do: reset a TCP connection, stream 50 MB. */
interface FaultServers {
  readonly resetUrl: string;
  readonly hugeUrl: string;
  resets: number;
  huge: number;
  close(): Promise<void>;
}

async function startFaultServers(): Promise<FaultServers> {
  const chunk = Buffer.alloc(64 * 1024, 120);
  const counts = { resets: 0, huge: 0 };
  const listen = async (server: Server) => {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  };
  const ofRun = (request: IncomingMessage) => request.headers[RUN_HEADER] !== undefined;
  const reset = createServer((request) => {
    if (ofRun(request)) counts.resets++;
    request.socket.resetAndDestroy();
  });
  const huge = createServer((request, response) => {
    if (ofRun(request)) counts.huge++;
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(HUGE_BODY_BYTES) });
    let left = HUGE_BODY_BYTES / chunk.length;
    const pump = () => {
      while (left > 0) {
        left--;
        if (!response.write(chunk)) return void response.once("drain", pump);
      }
      response.end();
    };
    pump();
    request.on("close", () => (left = 0));
  });
  const [resetUrl, hugeUrl] = [await listen(reset), await listen(huge)];
  return {
    resetUrl,
    hugeUrl,
    get resets() {
      return counts.resets;
    },
    get huge() {
      return counts.huge;
    },
    async close() {
      reset.closeAllConnections();
      huge.closeAllConnections();
      await Promise.all([new Promise((r) => reset.close(r)), new Promise((r) => huge.close(r))]);
    },
  } as FaultServers;
}

const FAULTS: TargetFault[] = [
  { name: "target answers 500 to every other request", rate: 40, durationS: 5, timeoutS: 2, url: (s) => `${s.targetUrl}/delay?ms=5&fail=0.5` },
  { name: "target hangs past the 1 s timeout", rate: 20, durationS: 5, timeoutS: 1, url: (s) => `${s.targetUrl}/delay?ms=3000` },
  { name: "target resets every connection", rate: 40, durationS: 5, timeoutS: 2, url: (_s, f) => `${f.resetUrl}/reset`, received: (f) => f.resets },
  {
    name: "target answers with a 50 MB body",
    rate: 2,
    durationS: 5,
    timeoutS: 10,
    url: (_s, f) => `${f.hugeUrl}/huge`,
    received: (f) => f.huge,
    note: "bodies nobody reads are drained chunk by chunk (workers/shard/response-body.ts bodyBytes), counted in data_received",
  },
];

async function received(stack: LocalStack, runId: string): Promise<number> {
  const response = await fetch(`${stack.targetUrl}/api/admin/test/request-ledger?run=${runId}`, {
    headers: { authorization: `Bearer ${stack.targetAdminSecret}` },
  });
  if (!response.ok) throw new Error(`request ledger: ${response.status}`);
  return ((await response.json()) as { rows: Array<{ count: number }> }).rows.reduce((a, r) => a + r.count, 0);
}

/** Polls the run until every shard has reported done; ms since `fromMs`. */
async function shardsStopped(client: EdgeloadClient, runId: string, fromMs: number): Promise<number | null> {
  while (Date.now() - fromMs < 30_000) {
    const view = await client.getRun(runId);
    if (view.live.shardsDone === view.live.shards) return Date.now() - fromMs;
    await sleep(50);
  }
  return null;
}

/** Starts `edgeload run spec.json` as a user would and waits for its run to exist. */
async function cliRun(stack: LocalStack, client: EdgeloadClient, spec: unknown, dir: string) {
  const file = join(dir, "spec.json");
  await writeFile(file, JSON.stringify(spec));
  const before = new Set((await client.listRuns()).runs.map((r) => r.id));
  const child = spawn(process.execPath, [join(PROJECT_ROOT, "cli/edgeload.mjs"), "run", file, "--url", stack.apiUrl, "--token", stack.token, "--quiet"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = once(child, "exit").then(([code]) => code as number);
  for (let i = 0; i < 200; i++) {
    const created = (await client.listRuns()).runs.find((r) => !before.has(r.id));
    if (created) return { id: String(created.id), child, exited, output: () => output };
    await sleep(50);
  }
  child.kill("SIGKILL");
  throw new Error(`edgeload run did not create a run: ${output}`);
}

/** The run of a fault row: `fault.rate` for `fault.durationS` on two shards against the fault's URL. */
function faultSpec(stack: LocalStack, servers: FaultServers, fault: TargetFault) {
  return {
    name: fault.name,
    target: fault.url(stack, servers).replace(/\/[^/]*$/, ""),
    steps: [{ path: new URL(fault.url(stack, servers)).pathname + new URL(fault.url(stack, servers)).search }],
    executor: "constant-arrival-rate",
    rate: fault.rate,
    duration: `${fault.durationS}s`,
    timeout: `${fault.timeoutS}s`,
    shards: SHARDS,
    regions: ["wnam", "weur"],
    maxVUs: 200,
  };
}

/**
 * Starts the run as `stop` says and stops it 2.5 s after it started: through the API, or
 * with Ctrl-C in a real `edgeload run` process (whose exit code goes in `exitNote`); with
 * "none" it is left to end. `timeMs`: how long until every shard had stopped (stops only).
 */
async function startAndStop(
  stack: LocalStack,
  client: EdgeloadClient,
  spec: unknown,
  stop: Stop,
  dir: string,
): Promise<{ id: string; timeMs: number | null; exitNote: string }> {
  if (stop === "ctrl-c") {
    const cli = await cliRun(stack, client, spec, dir);
    const id = cli.id;
    await sleep(Math.max(0, Date.parse((await client.getRun(id)).startedAt) + STOP_AFTER_MS - Date.now()));
    const at = Date.now();
    cli.child.kill("SIGINT");
    const timeMs = await shardsStopped(client, id, at);
    const code = await cli.exited;
    return { id, timeMs, exitNote: `edgeload run exited ${code}${code === 105 ? " (aborted, as k6)" : `: ${cli.output().slice(-300)}`}` };
  }
  const created = await client.createRun(spec);
  const id = created.id;
  let timeMs: number | null = null;
  if (stop === "api") {
    await sleep(Math.max(0, Date.parse(created.startsAt) + STOP_AFTER_MS - Date.now()));
    const at = Date.now();
    await client.abort(id);
    timeMs = await shardsStopped(client, id, at);
  }
  return { id, timeMs, exitNote: "" };
}

/** The run's totals over its D1 window rows. */
async function storedTotals(client: EdgeloadClient, id: string) {
  const rows = await client.sql(
    "SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(dropped), 0) AS dropped, COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(connection_errors), 0) AS connectionErrors, COALESCE(SUM(timeouts), 0) AS timeouts FROM windows WHERE run_id = ?1",
    [id],
  );
  return rows.rows[0] as { sent: number; dropped: number; requests: number; connectionErrors: number; timeouts: number };
}

/** The coordinator's resident memory, sampled every 100 ms from now until stop(): the peak over the first sample. */
function watchCoordinatorMemory(stack: LocalStack): { growthBytes(): number; stop(): void } {
  const before = residentBytes(stack.processes.coordinator);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(stack.processes.coordinator))), 100);
  return { growthBytes: () => peak - before, stop: () => clearInterval(sampler) };
}

async function observe(
  stack: LocalStack,
  client: EdgeloadClient,
  servers: FaultServers,
  fault: TargetFault,
  stop: Stop,
  dir: string,
): Promise<FaultObservation> {
  const spec = faultSpec(stack, servers, fault);
  const receivedBefore = fault.received?.(servers) ?? 0;
  const memory = watchCoordinatorMemory(stack);
  try {
    const { id, timeMs: stopMs, exitNote } = await startAndStop(stack, client, spec, stop, dir);
    const final = await client.waitForEnd(id, () => {}, 200);
    const timeMs = stop === "none" ? Math.max(0, Date.now() - (Date.parse(final.startedAt) + fault.durationS * 1000)) : stopMs;
    const [summary, stored] = await Promise.all([client.summary(id), storedTotals(client, id)]);
    const metrics = summary.metrics as Record<string, { count: number } | undefined>;
    const bytes = Number((summary.metrics as Record<string, { count?: number } | undefined>).data_received?.count ?? 0);
    const memoryNote =
      fault.received === undefined || !fault.name.includes("50 MB")
        ? ""
        : `coordinator workerd RSS peak +${(memory.growthBytes() / 2 ** 20).toFixed(0)} MiB while ${(bytes / 2 ** 20).toFixed(0)} MiB were received`;
    const stopLabel = stop === "api" ? " + API abort at 2.5 s" : stop === "ctrl-c" ? " + Ctrl-C at 2.5 s" : "";
    const notes = [fault.note && stop === "none" ? fault.note : "", memoryNote, exitNote].filter(Boolean);
    return {
      fault: fault.name + stopLabel,
      scheduled: fault.rate * fault.durationS,
      stoppedEarly: stop !== "none",
      outcome: final.status,
      expectedOutcome: stop === "none" ? "passed" : "aborted",
      sent: stored.sent,
      dropped: stored.dropped,
      connectionErrors: stored.connectionErrors,
      timeouts: stored.timeouts,
      received: fault.received ? fault.received(servers) - receivedBefore : await received(stack, id),
      summaryRequests: metrics.http_reqs?.count ?? 0,
      storedRequests: stored.requests,
      timeMs,
      timeLabel: stop === "none" ? "recover" : "stop",
      ...(notes.length ? { note: notes.join("; ") } : {}),
    };
  } finally {
    memory.stop();
  }
}

export async function targetFaultRows(log: (line: string) => void): Promise<FaultObservation[]> {
  const dir = await mkdtemp(join(tmpdir(), "edgeload-faults-"));
  const stack = await startLocalStack({ persist: join(dir, "state"), vars: { MAX_RATE_PER_S: "5000" } });
  const servers = await startFaultServers();
  const client = new EdgeloadClient(stack.apiUrl, stack.token);
  const rows: FaultObservation[] = [];
  try {
    for (const fault of FAULTS) {
      for (const stop of ["none", "api", "ctrl-c"] as const) {
        const row = await observe(stack, client, servers, fault, stop, dir);
        log(`  ${row.fault}: ${row.outcome}, sent ${row.sent}, received ${row.received}`);
        rows.push(row);
      }
    }
  } finally {
    await servers.close();
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
