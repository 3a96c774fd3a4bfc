import { describe, expect, it } from "vitest";
import { aggregatorNode, finishStep, SHARD_ROWS_STAGGER_MS } from "./aggregator-book.ts";

const node = (index: number, level: number) =>
  aggregatorNode(
    { index, region: "wnam", level, children: [0, 1], parent: null, shardCount: 2 },
    { runId: "r", t0Ms: 0, spec: { durationMs: 10_000, timeoutMs: 1_000 } },
    60_000,
  );

describe("finishStep", () => {
  it("writes a level-1 aggregator's shard rows SHARD_ROWS_STAGGER_MS × its index after it finished, then sends its done", () => {
    const at = 50_000;
    expect(finishStep(node(3, 1), false, at, at)).toEqual({ kind: "wait-for-rows", untilMs: at + 3 * SHARD_ROWS_STAGGER_MS });
    expect(finishStep(node(3, 1), false, at, at + 3 * SHARD_ROWS_STAGGER_MS)).toEqual({ kind: "write-rows" });
    expect(finishStep(node(0, 1), false, at, at)).toEqual({ kind: "write-rows" });
    expect(finishStep(node(3, 1), true, at, at)).toEqual({ kind: "send-done" });
  });

  it("sends an upper level's done at once: it has no shard rows", () => {
    expect(finishStep(node(7, 2), false, 0, 0)).toEqual({ kind: "send-done" });
  });
});
