import { describe, expect, it } from "vitest";
import type { ShardTelemetry } from "../../core/run/protocol.ts";
import { shardsDoneUnder } from "./child-progress.ts";

const shard: ShardTelemetry = { region: "wnam", colo: "SJC", invocations: 1, restarts: 0, subrequests: 10, peakInFlight: 2 };
const aggregator = (shards: number, shardsDone: number): ShardTelemetry => ({ ...shard, shards, shardsDone });

describe("shardsDoneUnder", () => {
  it.each([
    ["a shard that said done", true, shard, 1],
    ["a shard still running", false, shard, 0],
    ["an aggregator whose every shard is done", true, aggregator(1_191, 1_191), 1_191],
    // It gave up on its silent children after its grace and still said done: it stands for 1, not 1,191.
    ["an aggregator done after giving up on 1,190 silent shards", true, aggregator(1_191, 1), 1],
    ["an aggregator still running, 40 of its shards done", false, aggregator(1_191, 40), 40],
  ])("%s → %i", (_what, done, telemetry, expected) => {
    expect(shardsDoneUnder(done, telemetry)).toBe(expected);
  });
});
