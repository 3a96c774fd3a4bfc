/**
 * What running a k6 script costs over the same load as a spec: the bench's own k6 script
 * (k6-constant-rate.js, one GET per iteration) and a one-step spec, each at the same
 * constant arrival rate against the local target's /delay, side by side in one run. The
 * script's isolate is in the generator's workerd process, so its CPU is counted with the
 * shards': the difference per request is the price of the RPC round trips (one into the
 * script per iteration, one back per request) and of the script's own JavaScript.
 *
 *   npm run bench -- script [--rates 100,300,500] [--duration 15s] [--delay 20] [--shards 4]
 */
import { join } from "node:path";
import { EdgeloadClient } from "../../cli/client.ts";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import { startLocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";
import { scriptRun } from "../../cli/script-command.ts";
import { markdownTable } from "./markdown-table.ts";

interface Measured {
  readonly requests: number;
  readonly dropped: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly cpuMsPerRequest: number;
}

export async function scriptCostBench(rates: readonly number[], duration: string, delayMs: number, shards: number): Promise<void> {
  const stack = await startLocalStack({ persist: false });
  try {
    const client = new EdgeloadClient(stack.apiUrl, stack.token);
    const url = `${stack.targetUrl}/delay?ms=${delayMs}`;
    await (await fetch(url)).arrayBuffer();
    const common = { shards, regions: ["wnam", "enam", "weur", "apac"], timeout: "10s" };
    const measure = async (spec: unknown): Promise<Measured> => {
      const pids = stack.processes.coordinator;
      const before = cpuSeconds(pids);
      const run = await client.createRun(spec);
      await client.waitForEnd(run.id, () => {}, 1000);
      const cpuS = cpuSeconds(pids) - before;
      const m = (await client.summary(run.id)).metrics as Record<string, any>;
      return {
        requests: m.http_reqs.count,
        dropped: m.dropped_iterations.count,
        p50: m.http_req_duration.med,
        p95: m.http_req_duration["p(95)"],
        p99: m.http_req_duration["p(99)"],
        cpuMsPerRequest: (cpuS * 1000) / m.http_reqs.count,
      };
    };
    const script = async (rate: number, runFor: string) => {
      const built = await scriptRun(
        join(PROJECT_ROOT, "scripts/bench/k6-constant-rate.js"),
        { TARGET_URL: url, RATE: String(rate), DURATION: runFor, VUS: String(Math.max(200, rate)) },
        stack.targetUrl,
      );
      await client.uploadScript(built.id, built.modules);
      const scenarios = built.spec.scenarios as Record<string, Record<string, unknown>>;
      return measure({ ...built.spec, scenarios: { bench: { ...scenarios.bench, ...common } } });
    };
    const spec = (rate: number, runFor: string) =>
      measure({
        name: "bench spec",
        target: stack.targetUrl,
        steps: [{ path: `/delay?ms=${delayMs}` }],
        executor: "constant-arrival-rate",
        rate,
        duration: runFor,
        maxVUs: Math.max(200, rate),
        ...common,
      });
    // Warm both paths (a fresh stack compiles on first use; the script's isolate starts once per run).
    await spec(rates[0]!, "3s");
    await script(rates[0]!, "3s");
    console.log(`\n## k6 script vs spec: the same constant-arrival-rate load for ${duration} against /delay?ms=${delayMs}, ${shards} shards\n`);
    const rows: string[][] = [];
    for (const rate of rates) {
      const s = await spec(rate, duration);
      await new Promise((r) => setTimeout(r, 3000));
      const k = await script(rate, duration);
      await new Promise((r) => setTimeout(r, 3000));
      const row = (name: string, m: Measured) => [
        `${rate}/s`,
        name,
        String(m.requests),
        String(m.dropped),
        m.p50.toFixed(1),
        m.p95.toFixed(1),
        m.p99.toFixed(1),
        m.cpuMsPerRequest.toFixed(3),
      ];
      rows.push(row("spec", s), row("k6 script", k), [
        `${rate}/s`,
        "script − spec",
        "",
        "",
        (k.p50 - s.p50).toFixed(1),
        (k.p95 - s.p95).toFixed(1),
        (k.p99 - s.p99).toFixed(1),
        `+${(k.cpuMsPerRequest - s.cpuMsPerRequest).toFixed(3)} (×${(k.cpuMsPerRequest / s.cpuMsPerRequest).toFixed(2)})`,
      ]);
    }
    console.log(markdownTable(["rate", "run", "requests", "dropped", "p50 ms", "p95 ms", "p99 ms", "generator CPU ms/req"], rows));
  } finally {
    await stack.stop();
  }
}
