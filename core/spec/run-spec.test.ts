import { describe, expect, it } from "vitest";
import { redactSpec, REDACTED } from "./redact.ts";
import { specProblems, validSpec } from "../../test/support/run-spec-fixtures.ts";

const minimal = { target: "http://127.0.0.1:9090", steps: [{ path: "/delay?ms=20" }], executor: "constant-arrival-rate", rate: 200, duration: "30s" };

const ok = validSpec;
const problems = specProblems;

describe("parseRunSpec", () => {
  it("normalises a minimal constant-arrival-rate spec with k6 defaults", () => {
    const spec = ok(minimal);
    expect(spec).toMatchObject({
      executor: "constant-arrival-rate",
      stages: [{ durationMs: 30_000, fromPerS: 200, toPerS: 200 }],
      durationMs: 30_000,
      peakRatePerS: 200,
      timeoutMs: 10_000,
      shards: "auto",
      regions: ["wnam", "enam", "weur", "apac"],
      connectionSlots: 6,
      maxInFlight: 200,
    });
    expect(spec.steps[0]).toMatchObject({ name: "default", method: "GET", path: "/delay?ms=20", expectedStatuses: null, weight: 1 });
  });

  it("converts rate per timeUnit into per-second stages for ramping-arrival-rate", () => {
    const spec = ok({
      ...minimal,
      rate: undefined,
      duration: undefined,
      executor: "ramping-arrival-rate",
      startRate: 60,
      timeUnit: "1m",
      stages: [
        { target: 120, duration: "1m" },
        { target: 0, duration: "30s" },
      ],
    });
    expect(spec.stages).toEqual([
      { durationMs: 60_000, fromPerS: 1, toPerS: 2 },
      { durationMs: 30_000, fromPerS: 2, toPerS: 0 },
    ]);
    expect(spec.peakRatePerS).toBe(2);
  });

  it("treats 0 as a value, not as unset", () => {
    const spec = ok({
      ...minimal,
      executor: "ramping-arrival-rate",
      rate: undefined,
      duration: undefined,
      startRate: 0,
      stages: [{ target: 10, duration: "10s" }],
    });
    expect(spec.stages[0]!.fromPerS).toBe(0);
  });

  it("serialises object bodies as JSON and adds a content-type", () => {
    const spec = ok({ ...minimal, steps: [{ method: "POST", path: "/x", body: { a: 1 } }] });
    expect(spec.steps[0]).toMatchObject({ body: '{"a":1}', headers: { "content-type": "application/json" } });
  });

  it("reports every problem at once, each naming its field", () => {
    const found = problems({
      target: "not a url",
      steps: [{ path: "no-slash", method: "FETCH", wieght: 2 }],
      executor: "constant-arrival-rate",
      rate: -1,
      duration: "forever",
      regions: ["mars"],
      thresholds: { http_req_duration: ["p95<1"] },
    });
    const fields = found.map((p) => p.field);
    for (const f of ["target", "steps.0.path", "steps.0.method", "steps.0", "rate", "duration", "regions.0", "thresholds.http_req_duration[0]"]) {
      expect(fields).toContain(f);
    }
    expect(found.find((p) => p.field === "duration")!.detail).toContain('"forever" is not a duration');
  });

  it("names the executors it knows when the executor is wrong, and still checks the rest", () => {
    const found = problems({ ...minimal, executor: "ramping-nothing", steps: [] });
    expect(found).toContainEqual({
      field: "executor",
      detail:
        "must be one of constant-arrival-rate, ramping-arrival-rate, constant-vus, ramping-vus, per-vu-iterations, shared-iterations, externally-controlled",
    });
    expect(found.map((p) => p.field)).toContain("steps");
  });

  it.each([
    // [spec change, field, why]
    [{ steps: [{ path: "/{{nope}}" }] }, "steps.0.path", "unknown template value"],
    [{ steps: [{ path: "/", headers: { authorization: "Bearer {{secrets.tok}}" } }] }, "steps.0.headers.authorization", "missing secret"],
    [{ steps: [{ path: "/", body: "x" }] }, "steps.0.body", "GET with a body"],
    [{ steps: [{ name: "a" }, { name: "a" }] }, "steps.1.name", "duplicate step names"],
    [{ preAllocatedVUs: 10, maxVUs: 5 }, "maxVUs", "maxVUs below preAllocatedVUs"],
    [{ duration: "0s" }, "duration", "a run of zero length"],
  ])("rejects %j at %s (%s)", (change, field, _why) => {
    expect(problems({ ...minimal, ...change }).map((p) => p.field)).toContain(field);
  });
});

describe("maxNotSentShare", () => {
  it("keeps the bound as given, 0 included, and leaves it out when absent (the default, 1 %, applies)", () => {
    expect(ok({ ...minimal, maxNotSentShare: 0.05 }).maxNotSentShare).toBe(0.05);
    expect(ok({ ...minimal, maxNotSentShare: 0 }).maxNotSentShare).toBe(0);
    expect(ok(minimal)).not.toHaveProperty("maxNotSentShare");
  });

  it.each([
    // [value, why]
    [1.5, "more than the whole schedule"],
    [-0.01, "a negative share"],
    ["1%", "a percentage as text, not a share"],
  ])("rejects %j (%s), naming the field and what it takes", (value, _why) => {
    expect(problems({ ...minimal, maxNotSentShare: value })).toContainEqual({
      field: "maxNotSentShare",
      detail: "a share of the schedule from 0 to 1, e.g. 0.01 for 1 %",
    });
  });
});

describe("redactSpec", () => {
  it("removes secret values and credentials in headers and bodies, keeping the rest", () => {
    const spec = ok({
      ...minimal,
      secrets: { tok: "s3cret" },
      steps: [
        { name: "a", path: "/a", headers: { Authorization: "Bearer literal-token", accept: "application/json" } },
        { name: "b", method: "POST", path: "/b", headers: { "x-key": "{{secrets.tok}}" }, body: "t={{secrets.tok}}" },
      ],
    });
    const redacted = JSON.stringify(redactSpec(spec));
    expect(redacted).not.toContain("s3cret");
    expect(redacted).not.toContain("literal-token");
    expect(redactSpec(spec).steps[0]!.headers).toEqual({ Authorization: REDACTED, accept: "application/json" });
    expect(redactSpec(spec).steps[1]!.body).toBe(REDACTED);
  });
});
