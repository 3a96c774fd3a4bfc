/**
 * `npm run bench -- fetch-options`: what each option edgeload's engine adds to a fetch costs
 * workerd — its run header, an abort signal with a timeout timer, manual redirects, a read
 * of `content-length` — in a bare closed loop (workers/fetch-floor) against the local
 * target's /delay endpoint, each alone and all together, interleaved over several rounds
 * so the host's drift falls on every variant alike. CPU of the loop's workerd per request.
 */
import { startLocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";
import { startFetchFloor } from "../../cli/fetch-floor.ts";
import { markdownTable } from "./markdown-table.ts";

const VARIANTS = ["", "header", "signal,timer", "manual", "content-length", "body", "header,signal,timer,manual,content-length,body"];

export async function fetchOptionsBench(requests: number, rounds: number, delayMs: number): Promise<void> {
  const stack = await startLocalStack({ persist: false });
  const target = `${stack.targetUrl}/delay?ms=${delayMs}`;
  const floor = await startFetchFloor(target);
  try {
    const perRequestMs = new Map<string, number[]>(VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < rounds; round++) {
      for (const options of VARIANTS) {
        const before = cpuSeconds(floor.pids);
        await floor.loop(target, { n: requests, concurrency: 25, ...(options ? { options } : {}) });
        perRequestMs.get(options)!.push(((cpuSeconds(floor.pids) - before) / requests) * 1000);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const none = median(perRequestMs.get("")!);
    console.log(`\n## Fetch options: a closed loop of ${requests} requests, 25 at a time, against /delay?ms=${delayMs}; ${rounds} interleaved rounds\n`);
    console.log(
      markdownTable(
        ["options", "CPU ms per request, each round", "median", "vs none"],
        VARIANTS.map((v) => {
          const xs = perRequestMs.get(v)!;
          return [v || "(none)", xs.map((x) => x.toFixed(3)).join(" "), median(xs).toFixed(3), (median(xs) / none).toFixed(2)];
        }),
        new Set([0, 1]),
      ),
    );
  } finally {
    await floor.dispose();
    await stack.stop();
  }
}
