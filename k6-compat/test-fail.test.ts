/**
 * exec.test.fail() as a VU's k6/execution gives it (runtime/vu-modules/execution.ts): as in
 * k6 v1.8.1 it marks the test failed without stopping anything, logs k6's error line at each
 * call, and is refused in the init context.
 */
import { describe, expect, it } from "vitest";
import { createVuModules } from "./runtime/vu-modules.ts";
import type { IterationHost } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";

const host: IterationHost = {
  send: async () => ({ status: 200, error: null, headers: {}, setCookies: [], body: "", durationMs: 1 }),
  sleep: async () => {},
  ...noSockets,
};

const execOf = (context: ReturnType<typeof vuContext>) => (createVuModules(context) as Record<string, any>)["k6/execution"];

describe("exec.test.fail()", () => {
  it("marks the VU's iteration failed with the first message, logs each call as k6 does, and does not throw", () => {
    const context = vuContext(host, { id: 4 });
    const exec = execOf(context);
    expect(() => exec.test.fail("soft check failed")).not.toThrow();
    exec.test.fail();
    expect(context.markedFailed).toBe("soft check failed");
    // Not an abort: the run goes on.
    expect(context.aborted).toBeUndefined();
    expect(context.samples).toEqual([
      { type: "log", level: "error", message: "test marked as failed: soft check failed", vu: 4 },
      { type: "log", level: "error", message: "test marked as failed", vu: 4 },
    ]);
  });

  it("marks with an empty message when called without one (or with null, as k6's nullish check)", () => {
    const context = vuContext(host);
    execOf(context).test.fail(null);
    expect(context.markedFailed).toBe("");
  });

  it("is refused in the init context, naming why, as k6 refuses it", () => {
    const context = vuContext(null);
    expect(() => execOf(context).test.fail("too early")).toThrow("execution.test.fail() called outside of VU context");
    expect(context.markedFailed).toBeUndefined();
  });
});
