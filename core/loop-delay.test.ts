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
    get now() { return now; },
  };
}

describe("LoopWatch", () => {
  it("gives 0 while the loop is free", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    const probe = watch.probe(() => true);
    probe.arm();
    for (let t = 1; t <= 100; t += 7) {
      await m.idleUntil(t);
      expect(watch.delayAt(m.now)).toBe(0);
    }
  });

  it("measures a stall from its start, to within the probe's period, erring low", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    const probe = watch.probe(() => true);
    probe.arm();
    await m.idleUntil(12); // probe fired at 5 and 10, next due at 15
    m.stall(30); // busy from 12 to 42: a response arriving at 13 is timed at 42
    const delay = watch.delayAt(m.now);
    expect(delay).toBe(42 - 15);
    expect(delay).toBeLessThanOrEqual(30);
    expect(delay).toBeGreaterThan(30 - PROBE_MS);
  });

  it("still sees the stall when the late probe runs just before the response", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    const probe = watch.probe(() => true);
    probe.arm();
    await m.idleUntil(12);
    m.stall(30);
    await m.runOverdue(); // the probe fires first, 27 ms late, and re-arms
    expect(watch.delayAt(m.now)).toBe(27);
    await m.idleUntil(m.now + 2); // a later response, loop free again
    expect(watch.delayAt(m.now)).toBe(0);
  });

  it("stops re-arming once nothing is in flight, and costs nothing then", async () => {
    const m = manualClock();
    let inFlight = true;
    let fired = 0;
    const counting = { now: m.clock.now, sleep: (ms: number) => { fired++; return m.clock.sleep(ms); } };
    const probe = new LoopWatch(counting).probe(() => inFlight);
    probe.arm();
    await m.idleUntil(20);
    const armedWhileBusy = fired;
    inFlight = false;
    await m.idleUntil(100);
    expect(armedWhileBusy).toBe(5); // at 0, 5, 10, 15, 20
    expect(fired).toBe(armedWhileBusy); // the firing at 25 found nothing in flight
    probe.arm();
    probe.arm(); // arming twice sets one timer
    expect(fired).toBe(armedWhileBusy + 1);
  });

  it("shares the probing among the engines of one loop: about one wake per PROBE_MS in all", async () => {
    const m = manualClock();
    let wakes = 0;
    const counting = { now: m.clock.now, sleep: (ms: number) => { wakes++; return m.clock.sleep(ms); } };
    const watch = new LoopWatch(counting);
    const probes = Array.from({ length: 16 }, () => watch.probe(() => true));
    for (const p of probes) p.arm();
    await m.idleUntil(1_000);
    // 16 probes, each every 16 × PROBE_MS: 1000 / 5 wakes, plus the first arming of each.
    expect(wakes).toBeLessThanOrEqual(1_000 / PROBE_MS + 16);
    // Any probe overdue shows the stall, whichever engine's response is timed.
    m.stall(40);
    expect(watch.delayAt(m.now)).toBeGreaterThan(40 - PROBE_MS - 1);
    expect(watch.delayAt(m.now)).toBeLessThanOrEqual(40);
  });

  it("forgets a probe whose engine left, or one so overdue its engine must be gone", async () => {
    const m = manualClock();
    const watch = new LoopWatch(m.clock);
    const gone = watch.probe(() => true);
    gone.arm();
    m.stall(50);
    expect(watch.delayAt(m.now)).toBe(45);
    gone.leave();
    expect(watch.delayAt(m.now)).toBe(0);
    // An object aborted mid-run never calls leave(): its probe never fires either.
    watch.probe(() => true).arm();
    m.stall(STALE_PROBE_MS + 10);
    expect(watch.delayAt(m.now)).toBe(0);
  });
});
