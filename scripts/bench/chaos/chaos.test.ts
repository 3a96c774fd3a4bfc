import { describe, expect, it } from "vitest";
import { judge, lossBoundOf, type ChaosObservation } from "./invariants.ts";
import { drawSchedule, withoutFault, type ChaosSchedule } from "./schedule.ts";

describe("drawSchedule", () => {
  it("draws the same schedule for the same seed and shape, and 2–6 faults within the run", () => {
    for (const shape of ["flat", "tree"] as const) {
      for (let seed = 1; seed <= 300; seed++) {
        const schedule = drawSchedule(seed, shape);
        expect(drawSchedule(seed, shape)).toEqual(schedule);
        expect(schedule.faults.length).toBeGreaterThanOrEqual(2);
        expect(schedule.faults.length).toBeLessThanOrEqual(6);
        // D1, R2 and the abort touch what runs share, or end the run: once at most.
        for (const kind of ["d1-refusing", "r2-missing", "abort"]) expect(schedule.faults.filter((f) => f.kind === kind).length).toBeLessThanOrEqual(1);
        // A flat run has no aggregator to fault.
        if (shape === "flat") expect(JSON.stringify(schedule)).not.toMatch(/aggregator/);
      }
    }
  });

  it("shrinks by dropping one fault", () => {
    const schedule = drawSchedule(7, "tree");
    expect(withoutFault(schedule, 0).faults).toEqual(schedule.faults.slice(1));
  });
});

const schedule = (faults: ChaosSchedule["faults"]): ChaosSchedule => ({ seed: 1, shape: "flat", faults });
const clean: ChaosObservation = {
  schedule: schedule([{ kind: "coordinator-restart", atMs: 1_000 }]),
  runId: "r",
  status: "passed",
  received: 160,
  stored: { sent: 160, dropped: 0, requests: 160, connectionErrors: 0, timeouts: 0 },
  summary: { sent: 160, requests: 160 },
  shardRows: { count: 2, requests: 160 },
  shardsDone: 2,
  endedAfterMs: 2_000,
  stoppedAfterMs: null,
  secretsFound: [],
};
const restarted = schedule([{ kind: "shard-restart", shard: 0, atMs: 1_000 }]);

describe("judge", () => {
  const rows: Array<[string, Partial<ChaosObservation>, string[]]> = [
    // Every count agrees, the run passed in time: everything holds.
    ["a clean run", {}, []],
    // A shard restart may lose its open windows' results (1.6 s of its share: 32), not more.
    [
      "a restart's loss within its bound",
      {
        schedule: restarted,
        stored: { ...clean.stored, sent: 145, dropped: 15, requests: 145 },
        summary: { sent: 145, requests: 145 },
        shardRows: { count: 2, requests: 145 },
      },
      [],
    ],
    [
      "a loss beyond the bound, yet passed",
      { stored: { ...clean.stored, sent: 134, requests: 134 }, summary: { sent: 134, requests: 134 }, shardRows: { count: 2, requests: 134 }, received: 134 },
      ["agree", "verdict"],
    ],
    // The same loss, said to be inconclusive: the verdict holds, the counts do not.
    [
      "a loss beyond the bound, inconclusive",
      {
        status: "inconclusive",
        stored: { ...clean.stored, sent: 134, requests: 134 },
        summary: { sent: 134, requests: 134 },
        shardRows: { count: 2, requests: 134 },
        received: 134,
      },
      ["agree"],
    ],
    ["D1 holding a window twice", { stored: { ...clean.stored, sent: 170, requests: 170 } }, ["once"]],
    ["a shard that never reported, yet passed", { shardsDone: 1, shardRows: { count: 1, requests: 160 } }, ["agree", "verdict"]],
    ["an abort drawn, the run passed", { schedule: schedule([{ kind: "abort", atMs: 2_000 }]), stoppedAfterMs: 300 }, ["verdict"]],
    ["an abort the shards took 6 s to obey", { schedule: schedule([{ kind: "abort", atMs: 2_000 }]), status: "aborted", stoppedAfterMs: 6_000 }, ["ends"]],
    ["a run that ended 40 s after its schedule", { endedAfterMs: 40_000 }, ["ends"]],
    ["a secret in a log line", { secretsFound: ["log lines"] }, ["secrets"]],
  ];
  it.each(rows)("%s", (_name, change, broken) => {
    const judged = judge({ ...clean, ...change });
    expect(
      Object.entries(judged.held)
        .filter(([, held]) => !held)
        .map(([name]) => name),
    ).toEqual(broken);
  });

  it("bounds the loss by 1.6 s of a shard's share per shard restart (two windows may be open)", () => {
    expect(lossBoundOf(restarted)).toBe(32);
    expect(lossBoundOf({ ...restarted, shape: "tree" })).toBe(11);
  });
});
