/**
 * A k6 VU's context (k6-compat/runtime/vu-modules/context.ts) for unit tests of the VU's
 * modules: VU 1's first iteration of a constant-vus scenario, an empty jar, nothing shared;
 * a test states only what it is about (the host, the VU, the scenario, the options).
 */
import { CookieJar } from "../../k6-compat/runtime/cookie-jar.ts";
import type { VuContext } from "../../k6-compat/runtime/vu-modules/context.ts";

export function vuContext(host: VuContext["host"], overrides: Partial<VuContext> = {}): VuContext {
  return {
    id: 1,
    iteration: 0,
    iterationInTest: 0,
    scenario: { name: "s", executor: "constant-vus", startTimeMs: 0 },
    samples: [],
    host,
    jar: new CookieJar(),
    shared: new Map(),
    ...overrides,
  };
}
