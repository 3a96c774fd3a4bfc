import { describe, expect, it } from "vitest";
import { CUT_AT_GRACEFUL_STOP, TIMED_OUT, TimeoutQueue } from "./timeout-queue.ts";

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

  it("aborts each request with the reason it was added with, however late the sweep", () => {
    const q = new TimeoutQueue();
    const timedOut = q.add(100);
    const cut = q.add(150, CUT_AT_GRACEFUL_STOP);
    // Swept long after both deadlines (a loaded isolate): the reason, not the time, says which.
    q.sweep(10_000);
    expect(timedOut.signal.reason).toBe(TIMED_OUT);
    expect(cut.signal.reason).toBe(CUT_AT_GRACEFUL_STOP);
    expect((cut.signal.reason as DOMException).name).not.toBe("TimeoutError");
  });

  it("keeps each request's reason through compaction", () => {
    const q = new TimeoutQueue();
    for (let i = 0; i < 3_000; i++) {
      q.add(i).done();
      q.sweep(i);
    }
    const cut = q.add(5_000, CUT_AT_GRACEFUL_STOP);
    const timedOut = q.add(5_001);
    q.sweep(6_000);
    expect(cut.signal.reason).toBe(CUT_AT_GRACEFUL_STOP);
    expect(timedOut.signal.reason).toBe(TIMED_OUT);
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

describe("TimeoutQueue with deadlines out of order", () => {
  it("aborts a shorter timeout added after a longer one at its own deadline", () => {
    // A k6 script's params.timeout of 1 s on a request sent after one on the run's 60 s.
    const q = new TimeoutQueue();
    const long = q.add(60_000);
    const short = q.add(1_000);
    expect(q.nextDeadlineMs).toBe(1_000);
    q.sweep(2_000);
    expect(short.signal.reason).toBe(TIMED_OUT);
    expect(long.signal.aborted).toBe(false);
    expect(q.nextDeadlineMs).toBe(60_000);
  });

  it("keeps equal deadlines in the order they came and each reason with its own", () => {
    const q = new TimeoutQueue();
    const last = q.add(900);
    const cut = q.add(500, CUT_AT_GRACEFUL_STOP);
    const timedOut = q.add(500);
    const first = q.add(100);
    q.sweep(500);
    expect(first.signal.reason).toBe(TIMED_OUT);
    expect(cut.signal.reason).toBe(CUT_AT_GRACEFUL_STOP);
    expect(timedOut.signal.reason).toBe(TIMED_OUT);
    expect(last.signal.aborted).toBe(false);
  });

  it("wakes nobody for a request that has settled", () => {
    const q = new TimeoutQueue();
    const answered = q.add(100);
    q.add(10_000);
    answered.done();
    expect(q.nextDeadlineMs).toBe(10_000);
  });
});
