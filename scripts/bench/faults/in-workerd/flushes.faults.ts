/**
 * Fault rows inside workerd, the flushes between the run's objects: every window a receiver
 * (the coordinator, or an aggregator) accepted delivered to it again, windows held back and
 * sent newest first, and a receiver unreachable until the shards' deadline. The runs and
 * their accounting: ./fault-rows.ts.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, it } from "vitest";
import type { ChildFlush, FlushAck } from "../../../../core/run/protocol.ts";
import { FlushLog } from "../../../../coordinator/merge/flush-log.ts";
import { aggregatorOf, coordinatorOf, DURATION_MS, type Fault, faultRows, leafAggregator, TIMEOUT_MS, TREE, until } from "./fault-rows.ts";

/**
 * Wraps the `flush` of a run's coordinator (or of one of its aggregators) for that run (the
 * prototype is shared by every instance in this isolate, so a restarted object keeps the
 * fault). Returns the undo.
 */
async function interceptFlushes(
  runId: string,
  wrap: (message: ChildFlush, original: (m: ChildFlush) => Promise<FlushAck>) => Promise<FlushAck>,
  aggregator?: number,
): Promise<() => void> {
  let undo = () => {};
  type Flush = (this: { ctx: DurableObjectState }, m: ChildFlush) => Promise<FlushAck>;
  const stub = aggregator === undefined ? coordinatorOf(runId) : aggregatorOf(runId, aggregator);
  await runInDurableObject(stub, (instance) => {
    const proto = Object.getPrototypeOf(instance) as { flush: Flush };
    const original = proto.flush;
    proto.flush = function (this: { ctx: DurableObjectState }, message: ChildFlush) {
      const call = (m: ChildFlush) => original.call(this, m);
      const node = aggregator === undefined ? null : this.ctx.storage.kv.get<{ index: number }>("node");
      const mine = message.runId === runId && (aggregator === undefined || node?.index === aggregator);
      return mine ? wrap(message, call) : call(message);
    };
    undo = () => void (proto.flush = original);
  });
  return undo;
}

/** The windows the coordinator (or one aggregator) has accepted so far, as they were sent. */
async function acceptedWindows(runId: string, aggregator?: number): Promise<Array<{ shard: number; window: ChildFlush["windows"][number] }>> {
  return runInDurableObject(aggregator === undefined ? coordinatorOf(runId) : aggregatorOf(runId, aggregator), (_instance, state) =>
    new FlushLog(state.storage.sql).keptWindows().map(({ child, window }) => ({ shard: child, window })),
  );
}

const telemetry = { region: "wnam", colo: "local", invocations: 1, restarts: 0, subrequests: 0, peakInFlight: 0 };

const faults: Fault[] = [
  {
    name: "every accepted window flushed again",
    outcome: "passed",
    async during({ id, t0 }) {
      await until(t0 + 3_000);
      for (const { shard, window } of await acceptedWindows(id)) {
        await coordinatorOf(id).flush({ runId: id, childIndex: shard, windows: [window], watermarkS: 0, done: false, telemetry });
      }
    },
  },
  {
    name: "windows out of order (held 3.5 s, sent newest first)",
    outcome: "passed",
    async during({ id, t0 }) {
      const undo = await interceptFlushes(id, (message, original) => {
        if (message.childIndex !== 0) return original(message);
        if (Date.now() < t0 + 3_500) return Promise.reject(new Error("fault: flush held back"));
        return original({ ...message, windows: [...message.windows].reverse() });
      });
      await until(t0 + DURATION_MS + 15_000);
      undo();
    },
  },
  {
    name: "coordinator unreachable until the shards' deadline",
    outcome: "passed",
    note: "shards keep their windows and stop at their deadline by themselves; their final flushes retry (with backoff) until the coordinator answers",
    async during({ id, t0 }) {
      const reachableAt = t0 + DURATION_MS + TIMEOUT_MS;
      const undo = await interceptFlushes(id, (message, original) =>
        Date.now() < reachableAt ? Promise.reject(new Error("fault: coordinator unreachable")) : original(message),
      );
      await until(reachableAt + 20_000);
      undo();
    },
  },
  {
    name: "every window an aggregator accepted delivered to it again",
    outcome: "passed",
    spec: TREE,
    async during({ id, t0 }) {
      const leaf = await leafAggregator(id);
      await until(t0 + 3_000);
      for (const { shard, window } of await acceptedWindows(id, leaf.index)) {
        await aggregatorOf(id, leaf.index).flush({
          runId: id,
          childIndex: shard,
          windows: [window],
          watermarkS: 0,
          done: false,
          telemetry: { ...telemetry, region: leaf.region },
        });
      }
    },
  },
  {
    name: "aggregator unreachable until the shards' deadline",
    outcome: "passed",
    spec: TREE,
    note: "its shards keep their windows and stop at their deadline; their final flushes retry until it answers, and it passes them up",
    async during({ id, t0 }) {
      const leaf = await leafAggregator(id);
      const reachableAt = t0 + DURATION_MS + TIMEOUT_MS;
      const undo = await interceptFlushes(
        id,
        (message, original) => (Date.now() < reachableAt ? Promise.reject(new Error("fault: aggregator unreachable")) : original(message)),
        leaf.index,
      );
      await until(reachableAt + 20_000);
      undo();
    },
  },
];

describe("faults inside workerd: the flushes between the run's objects", () => {
  for (const row of faultRows(faults)) {
    it(row.title, async ({ task }) => {
      task.meta.fault = await row.observe();
    });
  }
});
