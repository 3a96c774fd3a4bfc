import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import { SETUP_MARGIN_MS, setupDeadlineMs } from "./run-record.ts";

const spec = (over: Partial<RunSpec>) => ({ timeoutMs: 10_000, ...over }) as RunSpec;
const script = { setup: true, setupTimeout: 60_000 } as NonNullable<RunSpec["script"]>;

describe("setupDeadlineMs", () => {
  it.each<[string, Partial<RunSpec>, number]>([
    // Nothing to set up: the margin alone (reaching R2, writing the run's rows).
    ["no setup", {}, SETUP_MARGIN_MS],
    // Each setup step is bounded by the run's request timeout.
    ["two setup steps", { setup: [{}, {}] as unknown as RunSpec["setup"] }, 20_000 + SETUP_MARGIN_MS],
    // A script's setup() by its setupTimeout.
    ["a script's setup()", { script }, 60_000 + SETUP_MARGIN_MS],
    // A script without setup() has nothing to wait for.
    ["a script without setup()", { script: { ...script, setup: false } }, SETUP_MARGIN_MS],
    // In named scenarios, the scenario that carries the script.
    ["named scenarios", { scenarios: [{ spec: { script } }] as unknown as RunSpec["scenarios"] }, 60_000 + SETUP_MARGIN_MS],
  ])("%s", (_, over, afterCreation) => {
    expect(setupDeadlineMs({ createdMs: 1_000, spec: spec(over) })).toBe(1_000 + afterCreation);
  });
});
