import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validSpec } from "../../test/support/run-spec-fixtures.ts";
import { shardSliceOf } from "../schedule/shard-slice.ts";
import { activeVus, externalLimitsOf, initialControl, newerControl, nextControl, parseControlRequest, shardVusUnder, type VuControl } from "./vu-control.ts";

const limits = { startVUs: 1, maxVUs: 5 };
const running = { status: "running" as const, stopping: false, pastDuration: false };
const level = (vus: number, paused = false, version = 1): VuControl => ({ vus, paused, version });

describe("parseControlRequest", () => {
  it.each([
    // [body, value read]
    [{ vus: 3 }, { vus: 3 }], // k6 scale --vus 3
    [{ vus: 0 }, { vus: 0 }], // 0 is a level, not "unset"
    [{ paused: true }, { paused: true }], // k6 pause
    [{ paused: false }, { paused: false }], // k6 resume
    [
      { vus: 2, paused: false },
      { vus: 2, paused: false },
    ], // both at once
  ])("reads %j", (body, value) => {
    expect(parseControlRequest(body)).toEqual({ ok: true, value });
  });

  it.each([
    // [body, field named, why]
    [{ vus: -1 }, "vus", "negative VUs"],
    [{ vus: 1.5 }, "vus", "a fraction of a VU"],
    [{ vus: "3" }, "vus", "a string"],
    [{ paused: "yes" }, "paused", "not a boolean"],
    [{}, "body", "nothing to change"],
    [null, "body", "not an object"],
    [[1], "body", "an array"],
    [{ vus: 1, maxVUs: 9 }, "maxVUs", "a field k6's scale takes but this API does not"],
  ])("refuses %j naming %s (%s)", (body, field, _why) => {
    const result = parseControlRequest(body);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.field)).toContain(field);
  });

  it("reports every problem at once", () => {
    const result = parseControlRequest({ vus: -2, paused: 1, other: true });
    expect(result.ok ? [] : result.problems.map((p) => p.field)).toEqual(["other", "vus", "paused"]);
  });
});

describe("nextControl", () => {
  it("sets the VUs, keeps the pause, and counts the version up", () => {
    expect(nextControl(level(1, true, 4), { vus: 3 }, limits, running)).toEqual({ ok: true, control: { vus: 3, paused: true, version: 5 } });
  });

  it("pauses and resumes keeping the VUs", () => {
    const paused = nextControl(level(4, false, 1), { paused: true }, limits, running);
    expect(paused).toEqual({ ok: true, control: { vus: 4, paused: true, version: 2 } });
    const resumed = nextControl(level(4, true, 2), { paused: false }, limits, running);
    expect(resumed).toEqual({ ok: true, control: { vus: 4, paused: false, version: 3 } });
  });

  it("takes maxVUs itself and 0", () => {
    expect(nextControl(level(1), { vus: 5 }, limits, running).ok).toBe(true);
    expect(nextControl(level(1), { vus: 0 }, limits, running).ok).toBe(true);
  });

  it.each([
    // [request, limits, run, field, detail]
    [{ vus: 6 }, limits, running, "vus", /at most the run's maxVUs \(5\); got 6/],
    [{ vus: 1 }, null, running, "executor", /not externally-controlled/],
    [{ vus: 1 }, limits, { ...running, status: "pending" as const }, "status", /not started yet/],
    [{ vus: 1 }, limits, { ...running, status: "finishing" as const, stopping: true }, "status", /ended or is ending \(finishing\)/],
    [{ paused: true }, limits, { ...running, status: "passed" as const }, "status", /ended or is ending \(passed\)/],
    [{ vus: 1 }, limits, { ...running, pastDuration: true }, "status", /duration is over/],
  ])("refuses %j (limits %j, run %j) naming %s", (request, runLimits, run, field, detail) => {
    const result = nextControl(level(1), request, runLimits, run);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems[0]!.field).toBe(field);
      expect(result.problems[0]!.detail).toMatch(detail);
    }
  });
});

describe("the level", () => {
  it("starts at the executor's vus, running, version 0", () => {
    expect(initialControl({ startVUs: 2, maxVUs: 9 })).toEqual({ vus: 2, paused: false, version: 0 });
  });

  it("has no VU active while paused", () => {
    expect(activeVus(level(4, true))).toBe(0);
    expect(activeVus(level(4, false))).toBe(4);
  });

  it("a shard keeps the newest level it was told, whatever the order", () => {
    const older = level(2, false, 3);
    const newer = level(5, false, 4);
    expect(newerControl(newer, older)).toBe(newer);
    expect(newerControl(older, newer)).toBe(newer);
    expect(newerControl(null, older)).toBe(older);
  });

  it("the shards' VUs under a level sum to it, each VU run by one shard (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 60 }),
        fc.boolean(),
        (weights, vus, paused) => {
          const owned = weights.flatMap((_, i) => shardVusUnder(shardSliceOf(weights, i), level(vus, paused)));
          expect(owned.sort((a, b) => a - b)).toEqual(Array.from({ length: paused ? 0 : vus }, (_, j) => j));
        },
      ),
    );
  });
});

describe("externalLimitsOf", () => {
  const target = "http://127.0.0.1:9090";
  const steps = [{ path: "/" }];

  it("reads an externally-controlled spec's start VUs and maxVUs", () => {
    expect(externalLimitsOf(validSpec({ target, steps, executor: "externally-controlled", vus: 2, maxVUs: 8, duration: "1m" }))).toEqual({
      startVUs: 2,
      maxVUs: 8,
    });
  });

  it("reads it as the one scenario of a run of named scenarios (a k6 script's options.scenarios)", () => {
    const spec = validSpec({ target, scenarios: { ctl: { executor: "externally-controlled", vus: 1, maxVUs: 3, duration: "30s", steps } } });
    expect(externalLimitsOf(spec)).toEqual({ startVUs: 1, maxVUs: 3 });
  });

  it("is null for a constant-vus run", () => {
    expect(externalLimitsOf(validSpec({ target, steps, executor: "constant-vus", vus: 3, duration: "1m" }))).toBeNull();
  });
});
