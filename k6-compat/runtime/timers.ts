/**
 * k6/timers (and the globals of the same names a k6 script sees): setTimeout, clearTimeout,
 * setInterval, clearInterval. Each pending timer holds the VU's event loop
 * (event-loop.ts), so an iteration ends only once its timers have fired or been cleared,
 * as in k6.
 *
 * The wait is the shard's think time (`wait`, IterationHost.sleep), not the isolate's own
 * clock: the shard cuts it short when the iteration must stop (a ramp-down's graceful
 * period, the run's end), so a script whose setInterval is never cleared is interrupted
 * as k6 interrupts it at gracefulStop.
 */
import type { VuEventLoop } from "./event-loop.ts";

type Callback = (...args: unknown[]) => unknown;

export interface Timers {
  setTimeout(callback: Callback, delayMs?: number, ...args: unknown[]): number;
  clearTimeout(id: unknown): void;
  setInterval(callback: Callback, delayMs?: number, ...args: unknown[]): number;
  clearInterval(id: unknown): void;
}

/**
 * `wait(ms)`: resolves after ms, rejects when the iteration must stop. `loop()`: the
 * event loop of the VU's running iteration.
 */
export function createTimers(loop: () => VuEventLoop, wait: (ms: number) => Promise<void>): Timers {
  const active = new Map<number, () => void>();
  let nextId = 1;

  function start(callback: Callback, delayMs: unknown, args: unknown[], repeat: boolean, name: string): number {
    if (typeof callback !== "function") throw new TypeError(`${name}: the first argument must be a function`);
    const ms = Math.max(0, Number(delayMs) || 0);
    const id = nextId++;
    const events = loop();
    let cleared = false;
    const release = events.hold(() => (cleared = true));
    const stop = () => {
      cleared = true;
      active.delete(id);
      release();
    };
    active.set(id, stop);
    const tick = (): void => {
      wait(ms).then(
        () => {
          if (cleared) return;
          events.run(() => callback(...args));
          if (repeat && !cleared) tick();
          else stop();
        },
        (error: unknown) => {
          // The iteration must stop: the timer ends it (the shard knows it was interrupted).
          if (!cleared) events.fail(error);
          stop();
        },
      );
    };
    tick();
    return id;
  }

  const clear = (id: unknown) => active.get(Number(id))?.();

  return {
    setTimeout: (callback, delayMs, ...args) => start(callback, delayMs, args, false, "setTimeout"),
    clearTimeout: clear,
    setInterval: (callback, delayMs, ...args) => start(callback, delayMs, args, true, "setInterval"),
    clearInterval: clear,
  };
}
