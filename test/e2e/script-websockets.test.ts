/**
 * k6/websockets and k6/timers under `edgeload run` beside real k6, against the local
 * target's WebSocket echo (workers/target/websocket-echo.ts) on loopback: each iteration
 * opens a socket, sends N messages and one more from a setInterval, waits for every echo,
 * closes from a setTimeout; the iteration ends only when the socket has closed (k6's event
 * loop). Exit code, checks and the ws_* counts are deterministic here, so they must match
 * k6's exactly; a threshold on ws_msgs_received gives both tools the same verdict. The same
 * exchange through k6/ws (ws.connect, k6's older API) must match k6 too.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = { metrics: Record<string, { count?: number; passes?: number; fails?: number; thresholds?: Record<string, boolean> }> };

/**
 * 2 VUs × 2 iterations, each 5 messages and one from a timer: 4 sessions, 24 messages each
 * way, 7 checks each; k6 counts each close frame the script sends as a message sent (28).
 */
const SCRIPT = `
import { WebSocket } from "k6/websockets";
import { setTimeout, setInterval, clearInterval } from "k6/timers";
import { check } from "k6";
import { Counter } from "k6/metrics";

const echoes = new Counter("echoes");
const N = 5;

export const options = {
  scenarios: { sockets: { executor: "per-vu-iterations", vus: 2, iterations: 2, maxDuration: "60s" } },
  thresholds: {
    ws_msgs_received: [\`count==\${__ENV.EXPECTED_RECEIVED}\`],
    checks: ["rate==1"],
    // A sub-metric by the socket's tags: its own (params.tags) and the scenario's.
    "ws_msgs_sent{kind:echo,scenario:sockets}": ["count==28"],
  },
};

export default function () {
  const ws = new WebSocket(__ENV.BASE_URL.replace(/^http/, "ws") + "/ws/echo", null, { tags: { kind: "echo" } });
  let received = 0;
  ws.onopen = () => {
    for (let i = 0; i < N; i++) ws.send("m" + i);
    const id = setInterval(() => {
      ws.send("tick");
      clearInterval(id);
    }, 50);
  };
  ws.onmessage = (e) => {
    received++;
    echoes.add(1);
    check(e.data, { "an echo of what was sent": (d) => d === "tick" || /^m[0-9]$/.test(d) });
    if (received === N + 1) setTimeout(() => ws.close(), 20);
  };
  ws.onclose = () => check(received, { "every echo came back": (r) => r === N + 1 });
}
`;

/** The same exchange through k6/ws, k6's older callback API: 4 sessions, 3 messages each way (k6/ws does not count its close frame), 5 checks each. */
const LEGACY_SCRIPT = `
import ws from "k6/ws";
import { check } from "k6";

export const options = {
  scenarios: { sockets: { executor: "per-vu-iterations", vus: 2, iterations: 2, maxDuration: "60s" } },
  thresholds: { ws_msgs_received: [\`count==\${__ENV.EXPECTED_RECEIVED}\`] },
};

export default function () {
  let received = 0;
  const res = ws.connect(__ENV.BASE_URL.replace(/^http/, "ws") + "/ws/echo", {}, function (socket) {
    socket.on("open", () => ["a", "b", "c"].forEach((m) => socket.send(m)));
    socket.on("message", (data) => {
      received++;
      check(data, { "an echo": (d) => ["a", "b", "c"].includes(d) });
      if (received === 3) socket.setTimeout(() => socket.close(), 20);
    });
  });
  check(res, { "status is 101": (r) => r && r.status === 101 });
  check(received, { "every echo came back": (r) => r === 3 });
}
`;

/** A socket never closed (and, with TICK, an interval never cleared): the iteration is interrupted at gracefulStop, as in k6. */
const NEVER_CLOSED_SCRIPT = `
import { WebSocket } from "k6/websockets";
import { setInterval } from "k6/timers";

export const options = {
  scenarios: { held: { executor: "constant-vus", vus: 1, duration: "2s", gracefulStop: "1s" } },
};

export default function () {
  const ws = new WebSocket(__ENV.BASE_URL.replace(/^http/, "ws") + "/ws/echo");
  if (__ENV.TICK) ws.onopen = () => setInterval(() => ws.send("still here"), 200);
}
`;

interface Outcome {
  readonly code: number;
  readonly summary: Exported;
  readonly output: string;
}

describeWithK6("k6/websockets and k6/timers under edgeload run beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-script-websockets-");
  let dir: string;
  let script: string;
  let legacy: string;
  let neverClosed: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-script-websockets-"));
    script = join(dir, "echo.js");
    await writeFile(script, SCRIPT);
    legacy = join(dir, "legacy.js");
    await writeFile(legacy, LEGACY_SCRIPT);
    neverClosed = join(dir, "never-closed.js");
    await writeFile(neverClosed, NEVER_CLOSED_SCRIPT);
  });

  let runs = 0;
  async function underK6(env: Record<string, string>, path = script): Promise<Outcome> {
    const out = join(dir, `k6-${++runs}.json`);
    const args = ["run", "--quiet", "--summary-export", out, ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]), path];
    try {
      const { stdout } = await promisify(execFile)(k6, args, { env: { ...process.env, K6_NO_USAGE_REPORT: "true" } });
      return { code: 0, summary: JSON.parse(await readFile(out, "utf8")) as Exported, output: stdout };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, summary: JSON.parse(await readFile(out, "utf8")) as Exported, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
    }
  }

  async function underEdgeload(env: Record<string, string>, path = script): Promise<Outcome> {
    const out = join(dir, `edge-${++runs}.json`);
    const r = await runCli(["run", path, "--quiet", "--summary-export", out, ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`])], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    const output = r.stdout + r.stderr;
    if (r.code === 104 || r.code > 99) throw new Error(`edgeload exited ${r.code}:\n${output}`);
    const summary = await readFile(out, "utf8").catch(() => {
      throw new Error(`edgeload exited ${r.code} without its summary:\n${output}`);
    });
    return { code: r.code, summary: JSON.parse(summary) as Exported, output };
  }

  /** What must be the same under both tools: exit code, checks, and the socket counts. */
  const figures = (o: Outcome) => {
    const m = o.summary.metrics;
    return {
      code: o.code,
      checks: { passes: m.checks?.passes, fails: m.checks?.fails },
      iterations: m.iterations?.count,
      ws_sessions: m.ws_sessions?.count,
      ws_msgs_sent: m.ws_msgs_sent?.count,
      ws_msgs_received: m.ws_msgs_received?.count,
      echoes: m.echoes?.count,
      thresholds: Object.fromEntries(
        Object.entries(m).flatMap(([key, v]) => Object.entries(v.thresholds ?? {}).map(([expr, failed]) => [`${key} ${expr}`, failed])),
      ),
      measured: { connecting: m.ws_connecting !== undefined, sessionDuration: m.ws_session_duration !== undefined },
    };
  };

  it("runs a WebSocket echo script with k6's exit code, checks and ws_* counts", async () => {
    const env = { BASE_URL: fixture.stack.targetUrl, EXPECTED_RECEIVED: "24" };
    const k6Run = await underK6(env);
    const edge = await underEdgeload(env);
    expect(figures(k6Run), k6Run.output).toEqual({
      code: 0,
      checks: { passes: 28, fails: 0 },
      iterations: 4,
      ws_sessions: 4,
      ws_msgs_sent: 28,
      ws_msgs_received: 24,
      echoes: 24,
      thresholds: {
        "ws_msgs_received count==24": false,
        "checks rate==1": false,
        "ws_msgs_sent{kind:echo,scenario:sockets} count==28": false,
      },
      measured: { connecting: true, sessionDuration: true },
    });
    expect(figures(edge), edge.output).toEqual(figures(k6Run));
  }, 240_000);

  it("fails a threshold on ws_msgs_received as k6 does, exit 99", async () => {
    const env = { BASE_URL: fixture.stack.targetUrl, EXPECTED_RECEIVED: "25" };
    const [k6Run, edge] = [await underK6(env), await underEdgeload(env)];
    expect(k6Run.code).toBe(99);
    expect(figures(edge), edge.output).toEqual(figures(k6Run));
  }, 240_000);

  it("runs k6/ws's ws.connect script with k6's exit code, checks and ws_* counts", async () => {
    const env = { BASE_URL: fixture.stack.targetUrl, EXPECTED_RECEIVED: "12" };
    const k6Run = await underK6(env, legacy);
    const edge = await underEdgeload(env, legacy);
    expect(figures(k6Run), k6Run.output).toMatchObject({
      code: 0,
      checks: { passes: 20, fails: 0 },
      ws_sessions: 4,
      ws_msgs_sent: 12,
      ws_msgs_received: 12,
      thresholds: { "ws_msgs_received count==12": false },
    });
    expect(figures(edge), edge.output).toEqual(figures(k6Run));
  }, 240_000);

  it.each<[string, Record<string, string>]>([
    ["a socket held open", {}],
    ["a socket held open and an interval never cleared", { TICK: "1" }],
  ])(
    "interrupts an iteration with %s at gracefulStop, as k6 does, and the run ends",
    async (_what, extra) => {
      const env: Record<string, string> = { BASE_URL: fixture.stack.targetUrl, ...extra };
      const started = Date.now();
      const edge = await underEdgeload(env, neverClosed);
      const edgeMs = Date.now() - started;
      const k6Run = await underK6(env, neverClosed);
      const counted = (o: Outcome) => ({
        code: o.code,
        iterations: o.summary.metrics.iterations?.count ?? 0,
        ws_sessions: o.summary.metrics.ws_sessions?.count,
      });
      // One session, interrupted: no iteration completes.
      expect(counted(k6Run), k6Run.output).toEqual({ code: 0, iterations: 0, ws_sessions: 1 });
      expect(counted(edge), edge.output).toEqual(counted(k6Run));
      // 2 s and the 1 s graceful stop (about 6 s with the CLI's own work), not a socket held
      // until the run's deadline (generous for a busy machine).
      expect(edgeMs).toBeLessThan(30_000);
      if (extra.TICK) expect(edge.summary.metrics.ws_msgs_sent?.count ?? 0).toBeGreaterThan(3);
    },
    240_000,
  );
});
