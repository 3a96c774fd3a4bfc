/**
 * The `k6` module of one VU: check, sleep, group, fail, randomSeed. Checks and group
 * durations are buffered as samples (context.ts drain) and travel with the next call to
 * the host. randomSeed seeds the VU's own `Math` (vu-math.ts), which the script's code sees as
 * `Math`.
 */
import { GROUP_DURATION } from "../wire.ts";
import type { VuScope } from "./context.ts";
import type { VuMath } from "./vu-math.ts";

export function createK6({ vu, host, drain, tags: sampleTags }: VuScope, vuMath: VuMath) {
  return {
    check(value: unknown, sets: Record<string, unknown>, tags?: Record<string, unknown>): boolean {
      let all = true;
      for (const [name, predicate] of Object.entries(sets ?? {})) {
        const passed = Boolean(typeof predicate === "function" ? predicate(value) : predicate);
        vu.samples.push({ type: "check", name, passed, tags: { ...sampleTags(tags), check: name } });
        all &&= passed;
      }
      return all;
    },
    async sleep(seconds: number): Promise<void> {
      await host("sleep()").sleep(drain(), Math.max(0, Number(seconds) || 0) * 1000);
    },
    async group<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
      if (typeof fn !== "function") throw new Error("group() needs a function as its second argument");
      // k6 joins nested group names with "::" and refuses a name that holds it.
      if (String(name).includes("::")) throw new Error(`group and check names may not contain '::' (got "${name}")`);
      const outer = vu.group ?? "";
      const path = `${outer}::${name}`;
      vu.group = path;
      const startedMs = Date.now();
      try {
        const result = await fn();
        // k6's group_duration, tagged with the group: a threshold may name it (k6-compat/options.ts).
        vu.samples.push({ type: "trend", name: GROUP_DURATION, value: Date.now() - startedMs, tags: { group: path } });
        return result;
      } finally {
        vu.group = outer;
      }
    },
    fail(message = ""): never {
      throw new Error(message);
    },
    randomSeed(seed: number): void {
      // This VU's Math.random only, in VU code and in the init context alike, as in k6
      // (k6-compat/vu-math.test.ts pins both).
      vuMath.seed(seed);
    },
  };
}
