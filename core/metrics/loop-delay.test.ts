import { describe, expect, it } from "vitest";
import { LoopWatch, PROBE_MS, STALE_PROBE_MS } from "./loop-delay.ts";

/** A clock whose timers fire only when the test lets the "event loop" run them. */
function manualClock() {
  let now = 0;
  const timers: Array<{ at: number; fire: () => void }> = [];
  return {
    clock: { now: () => now, sleep: (ms: number) => new Promise<void>((fire) => timers.push({ at: now + ms, fire })) },
    /** A free loop: time moves to `ms`, every timer due by then fires at its due time. */
    async idleUntil(ms: number) {
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > ms) break;
        timers.shift();
        now = next.at;
        next.fire();
        await Promise.resolve();
        await Promise.resolve();
      }
      now = ms;
    },
    /** A busy loop: time moves on and no timer runs. */
    stall(ms: number) {
      now += ms;
    },
    /** The stall ends: overdue timers fire, late. */
    async runOverdue() {
      const due = timers.filter((t) => t.at <= now);
      for (const t of due) timers.splice(timers.indexOf(t), 1);
      for (const t of due) t.fire();
      await Promise.resolve();
      await Promise.resolve();
    },
    get now() {
      return now;
    },
  };
}

describe("LoopWatch", () => {
  it("gives 0 while the loop is free", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    watch.join(() => true).arm();
    for (let t = 1; t <= 100; t += 7) {
      await m.idleUntil(t);
      expect(watch.delayAt(m.now)).toBe(0);
    }
  });

  it("measures a stall from its start, to within the probe's period, erring low", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    watch.join(() => true).arm();
    await m.idleUntil(12); // probe fired at 10, next due at 20
    m.stall(30); // busy from 12 to 42: a response arriving at 13 is timed at 42
    const delay = watch.delayAt(m.now);
    expect(delay).toBe(42 - 2 * PROBE_MS);
    expect(delay).toBeLessThanOrEqual(30);
    expect(delay).toBeGreaterThan(30 - PROBE_MS);
  });

  it("still sees the stall when the late probe runs just before the response", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    watch.join(() => true).arm();
    await m.idleUntil(12);
    m.stall(30);
    await m.runOverdue(); // the probe fires first, 22 ms late, and re-arms
    expect(watch.delayAt(m.now)).toBe(42 - 2 * PROBE_MS);
    await m.idleUntil(m.now + 2); // a later response, loop free again
    expect(watch.delayAt(m.now)).toBe(0);
  });

  it("runs one timer chain for every engine of the loop, while any has requests in flight", async () => {
    const m = manualClock();
    let wakes = 0;
    const counting = {
      now: m.clock.now,
      sleep: (ms: number) => {
        wakes++;
        return m.clock.sleep(ms);
      },
    };
    const watch = new LoopWatch(counting);
    const inFlight = Array.from({ length: 16 }, () => false);
    const engines = inFlight.map((_, i) => watch.join(() => inFlight[i]!));
    inFlight[3] = true;
    for (const e of engines) e.arm(); // sixteen requests leave together: one timer
    await m.idleUntil(1_000);
    expect(wakes).toBe(1_000 / PROBE_MS + 1);
    // Any engine's response sees the stall.
    m.stall(40);
    expect(watch.delayAt(m.now)).toBe(40 - PROBE_MS); // it fired at 1000, due again at 1005
    await m.runOverdue();
    // Nothing in flight any more: the chain stops, and costs nothing.
    inFlight[3] = false;
    await m.idleUntil(2_000);
    const stopped = wakes;
    await m.idleUntil(3_000);
    expect(wakes).toBe(stopped);
    engines[0]!.arm();
    engines[1]!.arm();
    expect(wakes).toBe(stopped + 1);
  });

  it("re-arms a probe whose timer is gone, without charging responses for it", async () => {
    const m = manualClock();
    const dead = { now: m.clock.now, sleep: () => new Promise<void>(() => {}) }; // its object was evicted
    const watch = new LoopWatch(dead);
    const engine = watch.join(() => true);
    engine.arm();
    m.stall(50);
    expect(watch.delayAt(m.now)).toBe(50 - PROBE_MS);
    m.stall(STALE_PROBE_MS);
    expect(watch.delayAt(m.now)).toBe(0);
    engine.arm(); // the next request's arm replaces the dead chain
    expect(watch.delayAt(m.now + 3)).toBe(0);
    expect(watch.delayAt(m.now + PROBE_MS + 4)).toBe(4);
  });

  it("lets another engine arm at once when the one whose timer was pending leaves", async () => {
    const m = manualClock();
    const dies = { now: m.clock.now, sleep: () => new Promise<void>(() => {}) };
    const dyingWatch = new LoopWatch(dies);
    const a = dyingWatch.join(() => true);
    const b = dyingWatch.join(() => true);
    a.arm(); // a's timer dies with its object (evicted after its invocation)
    a.leave();
    m.stall(30);
    expect(dyingWatch.delayAt(m.now)).toBe(0); // nobody is charged for a's dead timer
    b.arm();
    expect(dyingWatch.delayAt(m.now + PROBE_MS + 2)).toBe(2);
  });

  it("arms no probe while an engine's own timers look at the loop often enough, and sees a stall through them", async () => {
    const m = manualClock();
    let wakes = 0;
    const counting = { now: m.clock.now, sleep: (ms: number) => (wakes++, m.clock.sleep(ms)) };
    const watch = new LoopWatch(counting);
    const engine = watch.join(() => true);
    // An arrival schedule every 7 ms (140/s) to 700 ms: each wake sets the next timer in the
    // same turn, told to the watch as EngineSleeps tells it.
    const next = (dueMs: number) => {
      engine.timerSet(dueMs);
      void counting.sleep(dueMs - m.now).then(() => {
        engine.timerFired(dueMs);
        if (dueMs + 7 <= 700) next(dueMs + 7);
      });
    };
    next(7);
    engine.arm(); // a request leaves: the engine's timer, due within PROBE_MS, will look
    await m.idleUntil(700);
    expect(wakes).toBe(100); // the schedule's wakes, and no probe between them
    // Busy from 700 to 740: the engine's timer due at 707 is overdue.
    next(707);
    m.stall(40);
    expect(watch.delayAt(m.now)).toBe(740 - 707);
    await m.runOverdue();
    expect(watch.delayAt(m.now)).toBe(740 - 707); // its lateness, in the same millisecond
    // The schedule ends with requests in flight: a probe of its own watches them.
    const before = wakes;
    engine.idle();
    expect(wakes).toBe(before + 1);
    await m.idleUntil(m.now + 5 * PROBE_MS);
    expect(wakes).toBe(before + 6);
  });

  it("arms a probe when the engine's next timer is further off than PROBE_MS", async () => {
    const m = manualClock();
    let probes = 0;
    const watch = new LoopWatch({ now: m.clock.now, sleep: (ms: number) => (probes++, m.clock.sleep(ms)) });
    const engine = watch.join(() => true);
    engine.timerSet(50); // 20/s: the next arrival is 50 ms away
    engine.arm();
    expect(probes).toBe(1);
    await m.idleUntil(45);
    // Armed at 0, 10, 20 and 30; at 40 the engine's timer at 50 is near enough.
    expect(probes).toBe(4);
    m.stall(30); // the probe due at 50 and the engine's timer are both overdue at 75
    expect(watch.delayAt(m.now)).toBe(75 - 50);
  });
});
