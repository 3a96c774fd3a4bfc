import { describe, expect, it } from "vitest";
import { compare, evaluateThresholds, parseThresholds, shouldAbort, type Threshold } from "./thresholds.ts";

describe("parseThresholds", () => {
  it.each([
    // [metric key, expression, expected aggregation, operator, value]
    ["http_req_duration", "p(95)<300", { kind: "percentile", p: 95 }, "<", 300],
    ["http_req_duration", "p(99.9) <= 1500", { kind: "percentile", p: 99.9 }, "<=", 1500],
    ["http_req_duration", "avg<200", { kind: "avg" }, "<", 200],
    ["http_req_duration", "med==20", { kind: "med" }, "==", 20],
    ["http_req_failed", "rate<0.01", { kind: "rate" }, "<", 0.01],
    ["checks", "rate>0.99", { kind: "rate" }, ">", 0.99],
    ["dropped_iterations", "count<10", { kind: "count" }, "<", 10],
    ["http_reqs", "rate>=100", { kind: "rate" }, ">=", 100],
    ["http_req_duration{step:login}", "max!=0", { kind: "max" }, "!=", 0],
  ])("%s: %s", (key, source, aggregation, operator, value) => {
    const parsed = parseThresholds({ [key]: [source] });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.value[0]).toMatchObject({ key, source, aggregation, operator, value, abortOnFail: false });
  });

  it("reads k6's object form with abortOnFail and delayAbortEval", () => {
    const parsed = parseThresholds({ http_req_failed: [{ threshold: "rate<0.05", abortOnFail: true, delayAbortEval: "10s" }] });
    expect(parsed).toMatchObject({ ok: true, value: [{ abortOnFail: true, delayAbortEvalMs: 10_000 }] });
  });

  it("parses tag filters on step and region", () => {
    const parsed = parseThresholds({ "http_req_duration{step:login,region:weur}": ["p(95)<300"] });
    expect(parsed).toMatchObject({ ok: true, value: [{ metric: "http_req_duration", tags: { step: "login", region: "weur" } }] });
  });

  it.each([
    // [input, what the error must mention]
    [{ http_req_durations: ["p(95)<1"] }, "unknown metric"],
    // Connection setup a Worker cannot time: refused with the reason, never passed on a zero.
    [{ http_req_connecting: ["p(95)<100"] }, "http_req_connecting: k6 times connection setup apart, which a Worker's fetch() does not expose"],
    [{ http_req_duration: ["p95<300"] }, "is not a threshold"],
    [{ http_req_duration: ["rate<0.1"] }, "does not apply to a trend"],
    [{ http_req_failed: ["p(95)<1"] }, "does not apply to a rate"],
    [{ http_req_duration: ["p(101)<5"] }, "between 0 and 100"],
    [{ "http_req_duration{name}": ["p(95)<5"] }, "malformed"],
    [{ "http_req_duration{}": ["p(95)<5"] }, "malformed"],
    [{ "http_req_duration{name:a": ["p(95)<5"] }, "unmatched"],
    [{ "http_req_duration}name:a{": ["p(95)<5"] }, "before its opening"],
    [{ "http_req_duration{name:a}x": ["p(95)<5"] }, "does not end with"],
    [{ "http_req_duration{name:a,}": ["p(95)<5"] }, "malformed"],
    [{ http_req_failed: [{ threshold: "rate<0.1", delayAbortEval: "soon" }] }, "not a duration"],
  ])("rejects %j", (input, message) => {
    const parsed = parseThresholds(input as never);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors.join("\n")).toContain(message);
  });

  it("reports every bad threshold, not the first", () => {
    const parsed = parseThresholds({ http_req_duration: ["nope", "p(95)<300", "also nope"], bogus: ["rate<1"] });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors).toHaveLength(3);
  });
});

describe("evaluation", () => {
  it.each([
    [1, "<", 2, true],
    [2, "<", 2, false],
    [2, "<=", 2, true],
    [3, ">", 2, true],
    [2, ">=", 2, true],
    [2, "==", 2, true],
    [2, "===", 3, false],
    [2, "!=", 3, true],
  ] as const)("%d %s %d is %s", (a, op, b, expected) => {
    expect(compare(a, op, b)).toBe(expected);
  });

  const parse = (input: Record<string, unknown[]>) => {
    const r = parseThresholds(input as never);
    if (!r.ok) throw new Error(r.errors.join());
    return r.value;
  };

  it("never passes a threshold without data: it is no-data, neither passed nor failed", () => {
    const t = parse({ checks: ["rate>0.99"] });
    expect(evaluateThresholds(t, () => null)).toEqual([{ key: "checks", source: "rate>0.99", observed: null, state: "no-data", abortOnFail: false }]);
  });

  it("does not abort on a threshold that has no data yet", () => {
    const t: Threshold[] = parse({ checks: [{ threshold: "rate>0.99", abortOnFail: true }] });
    expect(
      shouldAbort(
        t,
        evaluateThresholds(t, () => null),
        60_000,
      ),
    ).toBeUndefined();
  });

  it("aborts on a failing abortOnFail threshold only after delayAbortEval", () => {
    const t: Threshold[] = parse({ http_req_failed: [{ threshold: "rate<0.01", abortOnFail: true, delayAbortEval: "5s" }, "rate<0.5"] });
    const outcomes = evaluateThresholds(t, () => 0.2);
    expect(outcomes.map((o) => o.state)).toEqual(["failed", "passed"]);
    expect(shouldAbort(t, outcomes, 4_999)).toBeUndefined();
    expect(shouldAbort(t, outcomes, 5_000)?.source).toBe("rate<0.01");
  });
});

describe("metric names as k6 accepts them", () => {
  it.each([
    // [name, accepted, why]
    ["d1_write_errors", true, "digits after the first character (a provider's own script uses it)"],
    ["TokenLatency", true, "capitals"],
    ["2xx_rate", false, "a digit first"],
  ])("%s → %s (%s)", (name, accepted) => {
    const r = parseThresholds({ [name]: ["count<10"] }, { [name]: "counter" });
    expect(r.ok).toBe(accepted);
  });
});
