import { describe, expect, it } from "vitest";
import { STOP_RESEND_AFTER_MS, stopSignalDue, type StopSignal } from "./stop-signal.ts";

const NOW = 1_000_000;

describe("stopSignalDue", () => {
  const rows: Array<[string, StopSignal, boolean]> = [
    // A run that is not stopping tells its shards nothing.
    ["not stopping", { stopping: false, delivered: false, sentAtMs: null }, false],
    // Just stopped (an abort recorded): send the stop now.
    ["stopping, never sent", { stopping: true, delivered: false, sentAtMs: null }, true],
    // Sent a moment ago and not answered yet: a shard waiting on its last flush may take a while; do not pile calls up.
    ["on its way for 1 s", { stopping: true, delivered: false, sentAtMs: NOW - 1_000 }, false],
    // Sent long ago and never answered (the coordinator or a shard was reset under the call): send again.
    ["on its way past the resend time", { stopping: true, delivered: false, sentAtMs: NOW - STOP_RESEND_AFTER_MS }, true],
    // Every shard answered: nothing more to send.
    ["delivered", { stopping: true, delivered: true, sentAtMs: NOW - 60_000 }, false],
    // Chaos flat seed 89: the coordinator restarted mid-abort; its memory of the stop on its
    // way is gone (sentAtMs null) while the record says stopping, not delivered: send again.
    ["restarted mid-abort", { stopping: true, delivered: false, sentAtMs: null }, true],
  ];
  it.each(rows)("%s", (_name, signal, due) => {
    expect(stopSignalDue(signal, NOW)).toBe(due);
  });
});
