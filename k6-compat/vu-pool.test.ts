/**
 * Which VU an arrival-rate iteration runs on (runtime/vu-pool.ts), as k6 hands them out:
 * pre-allocated VUs in turn, then the one that has waited longest, a new one only when
 * none waits. What a user notices: per-VU data (`users[__VU - 1]`) spread over every VU.
 */
import { describe, expect, it } from "vitest";
import { VuPool } from "./runtime/vu-pool.ts";

/** Runs `script` ("t" takes a VU, "g<id>" gives VU id back) and lists the ids taken. */
function handOut(pool: VuPool, script: readonly string[]): Array<number | null> {
  const taken: Array<number | null> = [];
  for (const op of script) {
    if (op === "t") taken.push(pool.take());
    else pool.give(Number(op.slice(1)));
  }
  return taken;
}

describe("VuPool", () => {
  it.each([
    // One iteration at a time over 3 pre-allocated VUs: each takes its turn, as in k6 (a
    // last-in-first-out pool ran VU 1 every time, and per-VU data piled onto one user).
    [{ first: 1, size: 5, preAllocated: 3 }, ["t", "g1", "t", "g2", "t", "g3", "t", "g1", "t"], [1, 2, 3, 1, 2]],
    // Two back in the order 2, 1: the one that has waited longest (2) goes first.
    [{ first: 1, size: 4, preAllocated: 2 }, ["t", "t", "g2", "g1", "t", "t"], [1, 2, 2, 1]],
    // Every pre-allocated VU busy and none back: a new VU, after the pre-allocated ones.
    [{ first: 11, size: 4, preAllocated: 2 }, ["t", "t", "t", "g12", "t"], [11, 12, 13, 12]],
    // A pre-allocated VU that never ran waits since the start: it goes before one that came back.
    [{ first: 1, size: 3, preAllocated: 3 }, ["t", "g1", "t", "t", "t"], [1, 2, 3, 1]],
    // All of the shard's VUs busy: none to give (the shard's in-flight cap prevents it).
    [{ first: 1, size: 2, preAllocated: 1 }, ["t", "t", "t"], [1, 2, null]],
    // No pre-allocated part (a shard's share rounded to 0): VUs start as needed.
    [{ first: 7, size: 3, preAllocated: 0 }, ["t", "g7", "t", "t"], [7, 7, 8]],
  ])("hands out %j", (range, script, expected) => {
    expect(handOut(new VuPool(range), script)).toEqual(expected);
  });

  it("keeps the order over many iterations (the line is compacted as it goes)", () => {
    const pool = new VuPool({ first: 1, size: 10, preAllocated: 10 });
    const seen: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      const id = pool.take()!;
      seen.push(id);
      pool.give(id);
    }
    // Round robin over all ten: each ran 100 iterations.
    expect(seen.slice(0, 12)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2]);
    expect(new Set(seen.map((id) => seen.filter((s) => s === id).length))).toEqual(new Set([100]));
  });
});
