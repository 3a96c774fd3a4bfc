/**
 * The VU executor of an externally-controlled run (executors/vus.ts over shard-control.ts),
 * two shards under the virtual clock: it follows the level its shards are told — a scale-up
 * starts VUs at once, a pause starts no iteration while those in progress finish, a resume
 * starts them again, a scale-down lets the excess VUs finish their iteration and stop — and a
 * shard restarted with its storage resumes at the current level, not the run's start level.
 */
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import type { ShardAssignment, ShardWindow } from "../../core/run/protocol.ts";
import { MetricStats } from "../../core/metrics/metric-stats.ts";
import { afterEndMs } from "../../core/schedule/graceful-stop.ts";
import { shardSliceOf } from "../../core/schedule/shard-slice.ts";
import type { VuControl } from "../../core/run/vu-control.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import type { Flow } from "../../scenarios/flow.ts";
import { VirtualTime } from "../../test/support/virtual-time.ts";
import { ShardEngine } from "./engine.ts";
import { ShardControl } from "./shard-control.ts";

const WEIGHTS = [1, 1];
// Every iteration: a 50 ms request and 100 ms think.
const SPEC = { executor: "externally-controlled", vus: 1, maxVUs: 4, duration: "6s", connectionSlots: 10, steps: [{ path: "/", think: "100ms" }] };

function assignment(time: VirtualTime, index: number): ShardAssignment {
  const parsed = parseRunSpec({ target: "http://127.0.0.1:9", ...SPEC });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return {
    runId: "r-ext",
    slice: shardSliceOf(WEIGHTS, index),
    iterationsPerInvocation: 1_000_000,
    t0Ms: time.now,
    mode: "local",
    flushGraceMs: 0,
    deadlineMs: time.now + parsed.spec.durationMs + afterEndMs(parsed.spec),
    spec: parsed.spec,
    shard: { index, region: "wnam", weight: 1, segment: `${index}/2:${index + 1}/2`, maxInFlight: 4 },
  };
}

/** A Durable Object's synchronous key-value storage, in memory (what ShardControl keeps its level in). */
function memoryKv(): SyncKvStorage {
  const values = new Map<string, unknown>();
  return { get: (key: string) => values.get(key), put: (key: string, value: unknown) => void values.set(key, value) } as unknown as SyncKvStorage;
}

/** Runs the shards, telling both the levels at their times; returns each iteration's start (time, VU) and the iterations counted. */
async function runControlled(changes: ReadonlyArray<{ atMs: number; level: VuControl }>) {
  const time = new VirtualTime();
  const t0 = time.now;
  const starts: Array<{ t: number; vu: number }> = [];
  let running = 0;
  let peakRunning = 0;
  const controls = WEIGHTS.map(() => new ShardControl(memoryKv()));
  for (const { atMs, level } of changes) void time.sleep(atMs).then(() => controls.forEach((c) => c.tell(level)));
  const fetcher = (async () => {
    await time.sleep(50);
    return new Response("ok");
  }) as unknown as typeof fetch;
  const windows: Array<Omit<ShardWindow, "part">> = [];
  const engines = WEIGHTS.map((_, index) => {
    const a = assignment(time, index);
    const flow = customStepsFlow(a.spec);
    const counting: Flow = {
      async run(io, it) {
        starts.push({ t: time.now - t0, vu: it.vu! });
        peakRunning = Math.max(peakRunning, ++running);
        try {
          await flow.run(io, it);
        } finally {
          running--;
        }
      },
    };
    return new ShardEngine(a, time.clock, fetcher, (w) => windows.push(w), counting, undefined, null, controls[index]!);
  });
  const results = await time.run(Promise.all(engines.map((e) => e.run(0, Infinity))));
  const all = new MetricStats();
  for (const w of windows) for (const [, stats] of w.steps) all.mergeWire(stats);
  const iterations = all.counters.iterations;
  return { starts, results, iterations, peakRunning, controls };
}

const vusStartingIn = (starts: ReadonlyArray<{ t: number; vu: number }>, fromMs: number, toMs: number) =>
  [...new Set(starts.filter((s) => s.t >= fromMs && s.t < toMs).map((s) => s.vu))].sort();

describe("externally-controlled VUs", () => {
  it("follow the level: 1 VU, scaled to 3, paused, resumed, scaled to 1", async () => {
    const { starts, results, peakRunning } = await runControlled([
      { atMs: 1_000, level: { vus: 3, paused: false, version: 1 } },
      { atMs: 2_500, level: { vus: 3, paused: true, version: 2 } },
      { atMs: 3_500, level: { vus: 3, paused: false, version: 3 } },
      { atMs: 4_500, level: { vus: 1, paused: false, version: 4 } },
    ]);
    expect(results.map((r) => r.end)).toEqual(["finished", "finished"]);
    // Before the scale: the run's start level, one VU (numbered from 1, as k6's __VU).
    expect(vusStartingIn(starts, 0, 1_000)).toEqual([1]);
    // The scale-up starts the two new VUs at once, not at a later wake.
    for (const vu of [2, 3]) expect(starts.find((s) => s.vu === vu)!.t).toBe(1_000);
    expect(vusStartingIn(starts, 1_000, 2_500)).toEqual([1, 2, 3]);
    // Paused: no iteration starts (those in progress finish); resumed: all three start again at once.
    expect(vusStartingIn(starts, 2_500, 3_500)).toEqual([]);
    expect(
      starts
        .filter((s) => s.t === 3_500)
        .map((s) => s.vu)
        .sort(),
    ).toEqual([1, 2, 3]);
    // Scaled to 1: VUs 2 and 3 finish their iteration (150 ms at most) and start no other.
    expect(vusStartingIn(starts, 4_500, 6_000)).toEqual([1]);
    expect(peakRunning).toBe(3);
    // Never above the level; nothing starts after the duration.
    expect(starts.every((s) => s.t < 6_000)).toBe(true);
  });

  it("counts the iterations in progress at a pause: they finish and are counted", async () => {
    // Paused at 2.52 s, within iterations started at 2.4 s (every 150 ms from 0): they end at 2.55 s.
    const paused = await runControlled([{ atMs: 2_520, level: { vus: 1, paused: true, version: 1 } }]);
    expect(paused.starts.filter((s) => s.t >= 2_520)).toEqual([]);
    // 0, 150, …, 2400 ms: 17 iterations, the last one finished after the pause.
    expect(paused.starts).toHaveLength(17);
    expect(paused.iterations).toBe(17);
  });

  it("keeps the newest level a shard was told, so a shard restarted with its storage resumes at the current level", async () => {
    const kv = memoryKv();
    const before = new ShardControl(kv);
    const limits = { startVUs: 1, maxVUs: 4 };
    before.tell({ vus: 3, paused: false, version: 2 });
    // A level sent earlier that arrives late changes nothing.
    before.tell({ vus: 2, paused: false, version: 1 });
    const restarted = new ShardControl(kv);
    expect(restarted.levelOf(limits)).toEqual({ vus: 3, paused: false, version: 2 });
    // A shard never told anything runs the start level.
    expect(new ShardControl(memoryKv()).levelOf(limits)).toEqual({ vus: 1, paused: false, version: 0 });
  });

  it("refuses to run an externally-controlled assignment without its control level", () => {
    const time = new VirtualTime();
    const a = assignment(time, 0);
    expect(() => new ShardEngine(a, time.clock, fetch, () => {}, customStepsFlow(a.spec))).toThrow(/needs its shard's control level/);
  });
});
