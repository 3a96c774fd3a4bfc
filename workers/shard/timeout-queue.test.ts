import { describe, expect, it } from "vitest";
import { TimeoutQueue } from "./timeout-queue.ts";

describe("TimeoutQueue", () => {
  it("aborts exactly the requests whose deadline has passed, with a TimeoutError", () => {
    const q = new TimeoutQueue();
    const a = q.add(100);
    const b = q.add(200);
    const c = q.add(300);
    b.done(); // answered in time
    q.sweep(250);
    expect(a.signal.aborted).toBe(true);
    expect((a.signal.reason as DOMException).name).toBe("TimeoutError");
    expect(b.signal.aborted).toBe(false);
    expect(c.signal.aborted).toBe(false);
    expect(q.nextDeadlineMs).toBe(300);
    q.sweep(300);
    expect(c.signal.aborted).toBe(true);
    expect(q.nextDeadlineMs).toBe(Infinity);
  });

  it("stays bounded over many requests and still finds late ones after compaction", () => {
    const q = new TimeoutQueue();
    let kept: ReturnType<TimeoutQueue["add"]> | null = null;
    for (let i = 0; i < 50_000; i++) {
      const r = q.add(i + 10_000);
      if (i === 40_000) kept = r;
      else r.done();
      q.sweep(i);
    }
    expect(kept!.signal.aborted).toBe(false);
    q.sweep(50_001);
    expect(kept!.signal.aborted).toBe(true);
  });
});
