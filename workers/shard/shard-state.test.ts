/**
 * When a shard writes its state (and sends its windows): every window in a flat run; every
 * fourth in a tree, each shard at its own phase, so a receiver hears from a quarter of its
 * children a second rather than from all of them every fourth.
 */
import { describe, expect, it } from "vitest";
import { windowWrites, withHeldWindows, writeDue } from "./shard-state.ts";

/** The windows (0–11) after which a shard writes, holding what closed since its last write. */
function writesOf(shardIndex: number, windowsPerWrite: number | undefined): number[] {
  const writes: number[] = [];
  let held = 0;
  for (let windowS = 0; windowS < 12; windowS++) {
    held++;
    if (writeDue(held, windowsPerWrite, windowS, shardIndex)) {
      writes.push(windowS);
      held = 0;
    }
  }
  return writes;
}

describe("writeDue", () => {
  it("writes every window when the assignment says nothing (a flat run, or one stored before)", () => {
    expect(writesOf(5, undefined)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(writesOf(5, 1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("writes every fourth window in a tree, at the shard's phase", () => {
    expect(writesOf(0, 4)).toEqual([3, 7, 11]);
    expect(writesOf(1, 4)).toEqual([2, 6, 10]);
    expect(writesOf(3, 4)).toEqual([0, 4, 8]);
    expect(writesOf(7, 4)).toEqual([0, 4, 8]);
  });

  it("never holds more than windowsPerWrite windows, whatever the phase (a resume mid-phase)", () => {
    expect(writeDue(4, 4, 5, 0)).toBe(true);
    expect(writeDue(3, 4, 5, 0)).toBe(false);
  });

  it("spreads a receiver's children over the seconds: a quarter of them write after each window", () => {
    const children = Array.from({ length: 100 }, (_, i) => i);
    for (let windowS = 4; windowS < 8; windowS++) {
      expect(children.filter((i) => writesOf(i, 4).includes(windowS))).toHaveLength(25);
    }
  });
});

describe("withHeldWindows", () => {
  const window = (windowS: number) => ({ windowS, part: 1, steps: [] });
  const state = { pending: { "window:00000001:1": window(1) } } as unknown as Parameters<typeof withHeldWindows>[0];

  it("adds the windows held since the last write to the pending ones a write stores", () => {
    const written = withHeldWindows(state, [["window:00000002:1", window(2)]]);
    expect(Object.keys(written.pending ?? {}).sort()).toEqual(["window:00000001:1", "window:00000002:1"]);
    expect(Object.keys(state.pending ?? {})).toEqual(["window:00000001:1"]); // the state it was given is unchanged
  });

  it("stores the state as it is when nothing is held", () => {
    expect(withHeldWindows(state, [])).toBe(state);
  });
});

describe("windowWrites", () => {
  it("stores a flow's state after every window, even where a tree run writes its windows every fourth", () => {
    const every = 4;
    let held = 0;
    const stored: Array<{ state: boolean; flowState: boolean }> = [];
    for (let windowS = 0; windowS < 12; windowS++) {
      held++;
      const writes = windowWrites(held, every, windowS, 1, true);
      if (writes.state) held = 0;
      stored.push(writes);
    }
    // The state is written about one window in four; the flow state never misses one.
    expect(stored.filter((w) => w.state).length).toBeLessThanOrEqual(4);
    expect(stored.every((w) => w.flowState)).toBe(true);
    // A flow without state (most built-in flows) stores none.
    expect(windowWrites(1, every, 0, 1, false).flowState).toBe(false);
  });
});
