/**
 * Starts the fetch-floor Worker (workers/fetch-floor: workerd's own fetch loop, with no
 * edgeload in it) in its own workerd, warmed by one request, and names that workerd's
 * processes so its CPU can be read from /proc. Used by `edgeload crosscheck --run-k6
 * --floor` (whose residual is the runtime's), the generator bench (the floors) and the
 * fetch-options bench.
 */
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";
import { localWranglerEnv, PROJECT_ROOT } from "./local-stack.ts";
import { workerdDescendants } from "./processes.ts";

/** A loop's answer: percentiles of a paced loop, and its durations by second (of due time). */
export interface FloorAnswer {
  readonly p50Ms?: number;
  readonly p95Ms?: number;
  readonly p90Ms?: number;
  readonly p99Ms?: number;
  readonly maxMs?: number;
  readonly bySecondMs?: ReadonlyArray<readonly number[] | null>;
}

export interface FetchFloorWorker {
  /** Runs one loop (see the Worker's query parameters) against `targetUrl`; its JSON answer. */
  loop(targetUrl: string, query: Record<string, string | number>): Promise<FloorAnswer>;
  /** The workerd processes running it. */
  readonly pids: number[];
  dispose(): Promise<void>;
}

export async function startFetchFloor(targetUrl: string): Promise<FetchFloorWorker> {
  localWranglerEnv(); // as the stack's workerd runs, so the floor is measured on the same terms
  const before = new Set(workerdDescendants());
  const worker = await unstable_startWorker({
    config: join(PROJECT_ROOT, "workers/fetch-floor/wrangler.toml"),
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, logLevel: "warn" },
  });
  const origin = (await worker.url).origin;
  const loop: FetchFloorWorker["loop"] = async (target, query) => {
    const params = new URLSearchParams({ ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])), target });
    const response = await worker.fetch(`${origin}/?${params}`);
    if (!response.ok) throw new Error(`fetch floor failed: ${await response.text()}`);
    return (await response.json()) as FloorAnswer;
  };
  await loop(targetUrl, { n: 1, concurrency: 1 });
  return { loop, pids: workerdDescendants().filter((p) => !before.has(p)), dispose: () => worker.dispose() };
}
