/**
 * Custom-step flows in plain Node: captures (JSON path, header, regex), templates that
 * use them, think time, records into declared custom metrics, and the spec validation
 * that goes with them.
 */
import { describe, expect, it } from "vitest";
import { specProblems, validSpec } from "../test/support/run-spec-fixtures.ts";
import { CustomMetrics } from "../core/metrics/metric-stats.ts";
import { compileTemplate, templateErrors } from "../core/spec/template.ts";
import { compileCapture, jsonPathGet, parseJsonPath } from "../core/spec/capture.ts";
import { customStepsFlow } from "./custom-steps.ts";
import type { FlowIO, FlowRequest } from "./flow.ts";

describe("JSON path subset", () => {
  it.each([
    // [path, segments, why]
    ["$", [], "the whole document"],
    ["$.token", ["token"], "a top-level field"],
    ["$.data.items[0].id", ["data", "items", 0, "id"], "fields and indices"],
    ["$.a-b.c_d[12]", ["a-b", "c_d", 12], "dashes, underscores, multi-digit index"],
  ])("parses %s", (path, segments) => {
    expect(parseJsonPath(path)).toEqual(segments);
  });

  it.each([
    ["token", "no leading $"],
    ["$..token", "recursive descent is not supported"],
    ["$.items[*]", "no wildcards"],
    ["$['token']", "no bracket keys"],
    ["$.items[-1]", "no negative indices"],
  ])("refuses %s (%s)", (path) => {
    expect(parseJsonPath(path)).toBeNull();
  });

  it("finds values and misses cleanly", () => {
    const doc = { a: { b: [{ c: 1 }, { c: "two" }] }, n: null };
    expect(jsonPathGet(doc, ["a", "b", 1, "c"])).toBe("two");
    expect(jsonPathGet(doc, ["a", "b", 5, "c"])).toBeUndefined(); // index out of range
    expect(jsonPathGet(doc, ["a", 0])).toBeUndefined(); // index into an object
    expect(jsonPathGet(doc, ["a", "b", "c"])).toBeUndefined(); // key into an array
    expect(jsonPathGet(doc, ["toString"])).toBeUndefined(); // not an own property
  });
});

describe("captures", () => {
  const headers = new Headers({ "X-Request-Id": "req-7" });
  it.each([
    // [capture, body, value, why]
    [{ json: "$.token" }, '{"token":"t-1"}', "t-1", "a string as it is"],
    [{ json: "$.user.id" }, '{"user":{"id":42}}', "42", "a number as its JSON text"],
    [{ json: "$.user" }, '{"user":{"id":42}}', '{"id":42}', "an object as JSON"],
    [{ json: "$.token" }, '{"token":null}', undefined, "null is nothing"],
    [{ json: "$.token" }, "not json", undefined, "a body that is not JSON"],
    [{ header: "x-request-id" }, null, "req-7", "a header, case-insensitively"],
    [{ header: "x-missing" }, null, undefined, "a missing header"],
    [{ regex: "id=(\\w+)" }, "ok id=abc123;", "abc123", "the first group"],
    [{ regex: "\\d+" }, "order 99 shipped", "99", "the whole match without a group"],
    [{ regex: "id=(\\w+)" }, "nothing", undefined, "no match"],
  ])("%j on %j → %j (%s)", (spec, body, value, _why) => {
    expect(compileCapture(spec)(headers, body)).toBe(value);
  });
});

describe("templates", () => {
  const scope = { vars: { pw: "s3cret" }, secrets: {}, captured: new Set(["token"]) };

  it("inserts captured values, the VU number and fresh generated data", () => {
    const t = compileTemplate('{"u":"u_{{randomString(12)}}","e":"{{randomEmail}}","t":"{{captured.token}}","vu":{{vu}},"p":"{{vars.pw}}"}', scope);
    const a = JSON.parse(t({ iteration: 0, shard: 0, region: "wnam", vu: 3, captured: new Map([["token", "abc"]]) }));
    const b = JSON.parse(t({ iteration: 0, shard: 0, region: "wnam", vu: 3, captured: new Map([["token", "abc"]]) }));
    expect(a.u).toMatch(/^u_[A-Za-z0-9]{12}$/);
    expect(a.e).toMatch(/^user_[a-z0-9]{16}@example\.test$/);
    expect([a.t, a.vu, a.p]).toEqual(["abc", 3, "s3cret"]);
    expect(a.u).not.toBe(b.u); // fresh at each use
    expect(a.e).not.toBe(b.e);
  });

  it.each([
    // [template, error, why]
    ["{{captured.session}}", 'no earlier step captures "session"', "a name nobody captured before"],
    ["{{randomString(0)}}", "the length must be 1–256", "an empty string is no unique data"],
    ["{{randomString(x)}}", "unknown template value", "a length that is not a number"],
  ])("refuses %s", (text, error) => {
    expect(templateErrors(text, scope).join()).toContain(error);
  });
});

/** A scripted target for flows: each request gets the responder's answer. */
function scriptedIO(respond: (r: FlowRequest) => { status?: number; body?: string; headers?: Record<string, string> }) {
  const sent: FlowRequest[] = [];
  const metrics = new CustomMetrics();
  const checks = { passed: 0, failed: 0 };
  const sleeps: number[] = [];
  const io: FlowIO = {
    sample: () => {},
    async send(_step, request) {
      sent.push(request);
      const r = respond(request);
      return { status: r.status ?? 200, error: null, headers: new Headers(r.headers ?? {}), body: request.readBody ? (r.body ?? "") : null, durationMs: 12 };
    },
    check: (passed) => void (passed ? checks.passed++ : checks.failed++),
    count: (name, n = 1) => metrics.count(name, n),
    rate: (name, passed) => metrics.rate(name, passed),
    trend: (name, ms) => metrics.trend(name, ms * 1000),
    sleep: async (ms) => void sleeps.push(ms),
    now: () => 0,
  };
  return { io, sent, metrics, checks, sleeps };
}

const lifecycle = {
  target: "http://127.0.0.1:9090",
  executor: "constant-vus",
  vus: 1,
  duration: "10s",
  flow: "sequence",
  vars: { password: "pw-123456" },
  metrics: { login_duration: { type: "trend" }, login_success_rate: { type: "rate" }, logins: { type: "counter" } },
  steps: [
    {
      name: "register",
      method: "POST",
      path: "/app/v1/user",
      body: { username: "u_{{randomString(10)}}", email: "{{randomEmail}}", password: "{{vars.password}}" },
      capture: { username: { json: "$.username" } },
      think: "1s",
    },
    {
      name: "login",
      method: "POST",
      path: "/app/login",
      body: { username: "{{captured.username}}", password: "{{vars.password}}" },
      capture: { token: { json: "$.token" } },
      checks: [{ status: 200 }],
      think: { min: "500ms", max: "2s" },
      record: { login_duration: "duration", login_success_rate: "success", logins: "count" },
    },
    { name: "me", path: "/app/user", headers: { authorization: "Bearer {{captured.token}}" } },
    { name: "logout", method: "DELETE", path: "/app/logout", headers: { authorization: "Bearer {{captured.token}}" }, think: "2s" },
  ],
};

describe("sequence flows", () => {
  it("runs every step in order, carrying captures from step to step, with think time and records", async () => {
    const spec = validSpec(lifecycle);
    const { io, sent, metrics, sleeps, checks } = scriptedIO((r) =>
      r.url.endsWith("/app/v1/user")
        ? { status: 201, body: JSON.stringify({ username: JSON.parse(r.body!).username }) }
        : r.url.endsWith("/app/login")
          ? { body: '{"token":"tok-42"}' }
          : {},
    );
    await customStepsFlow(spec).run(io, { global: 0, shard: 0, region: "wnam", vu: 1 });
    expect(sent.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(["POST /app/v1/user", "POST /app/login", "GET /app/user", "DELETE /app/logout"]);
    const username = JSON.parse(sent[0]!.body!).username as string;
    expect(JSON.parse(sent[1]!.body!).username).toBe(username); // captured from the register response
    expect(sent[3]!.headers!.authorization).toBe("Bearer tok-42"); // logout used the login's token
    expect(sleeps[0]).toBe(1000);
    expect(sleeps[1]).toBeGreaterThanOrEqual(500);
    expect(sleeps[1]).toBeLessThanOrEqual(2000);
    expect(sleeps[2]).toBe(2000);
    expect(sleeps).toHaveLength(3);
    expect(metrics.trends.get("login_duration")!.count).toBe(1);
    expect(metrics.rates.get("login_success_rate")).toEqual([1, 1]);
    expect(metrics.counters.get("logins")).toBe(1);
    expect(checks).toEqual({ passed: 1, failed: 0 });
  });

  it("a failed capture fails a check on its step and skips the steps after it", async () => {
    const spec = validSpec(lifecycle);
    const { io, sent, metrics, checks, sleeps } = scriptedIO((r) =>
      r.url.endsWith("/app/v1/user") ? { status: 201, body: '{"username":"u"}' } : r.url.endsWith("/app/login") ? { status: 401, body: '{"error":"bad"}' } : {},
    );
    await customStepsFlow(spec).run(io, { global: 0, shard: 0, region: "wnam", vu: 1 });
    expect(sent).toHaveLength(2); // no GET /app/user, no logout with a missing token
    expect(checks).toEqual({ passed: 0, failed: 2 }); // the status check and the capture
    expect(metrics.rates.get("login_success_rate")).toEqual([0, 1]);
    expect(sleeps).toHaveLength(2); // the failed step still thinks, so a broken target is not hammered
  });

  it("keeps a VU's captures across its iterations, and starts arrival-rate iterations empty", async () => {
    const login = { name: "login", method: "POST", path: "/app/login", body: { username: "u", password: "p" }, capture: { token: { json: "$.token" } } };
    const spec = validSpec({ ...lifecycle, flow: "pick", steps: [login, lifecycle.steps[2]] });
    const { io, sent } = scriptedIO(() => ({ body: '{"token":"tok-9"}' }));
    const flow = customStepsFlow(spec);
    const captured = new Map<string, string>();
    await flow.run(io, { global: 0, shard: 0, region: "wnam", vu: 1, captured }); // login
    await flow.run(io, { global: 1, shard: 0, region: "wnam", vu: 1, captured }); // me
    expect(sent[1]!.headers!.authorization).toBe("Bearer tok-9");
    await flow.run(io, { global: 1, shard: 0, region: "wnam" }); // no VU: a fresh map
    expect(sent[2]!.headers!.authorization).toBe("Bearer ");
  });
});

describe("spec validation of flows", () => {
  it("normalises captures, think time and records", () => {
    const spec = validSpec(lifecycle);
    expect(spec.flow).toBe("sequence");
    expect(spec.metrics).toEqual({ login_duration: "trend", login_success_rate: "rate", logins: "counter" });
    expect(spec.steps[1]).toMatchObject({ capture: { token: { json: "$.token" } }, think: { minMs: 500, maxMs: 2000 } });
    expect(spec.steps[0]!.think).toEqual({ minMs: 1000, maxMs: 1000 });
    expect(spec.steps[2]!.think).toBeNull();
  });

  it.each([
    // [change to the lifecycle spec, field, why]
    [
      (s: any) => {
        s.steps[2].headers.authorization = "Bearer {{captured.session}}";
      },
      "steps.2.headers.authorization",
      "a value nobody captures",
    ],
    [
      (s: any) => {
        s.steps = [s.steps[2], s.steps[1]];
      },
      "steps.0.headers.authorization",
      "used before the step that captures it",
    ],
    [
      (s: any) => {
        s.steps[1].capture.token = { json: "$..token" };
      },
      "steps.1.capture.token",
      "outside the JSON path subset",
    ],
    [
      (s: any) => {
        s.steps[1].capture.token = { regex: "(" };
      },
      "steps.1.capture.token",
      "a broken regex",
    ],
    [
      (s: any) => {
        s.steps[1].capture.token = { json: "$.a", header: "x" };
      },
      "steps.1.capture.token",
      "two sources in one capture",
    ],
    [
      (s: any) => {
        s.steps[1].think = { min: "2s", max: "1s" };
      },
      "steps.1.think.max",
      "max below min",
    ],
    [
      (s: any) => {
        s.steps[1].record = { undeclared: "duration" };
      },
      "steps.1.record.undeclared",
      "record into an undeclared metric",
    ],
    [
      (s: any) => {
        s.steps[1].record = { login_success_rate: "duration" };
      },
      "steps.1.record.login_success_rate",
      "a duration into a rate",
    ],
    [
      (s: any) => {
        s.metrics.http_reqs = { type: "counter" };
      },
      "metrics.http_reqs",
      "a built-in metric's name",
    ],
    [
      (s: any) => {
        s.flow = "random";
      },
      "flow",
      "an unknown flow mode",
    ],
  ])("refuses %s at %s (%s)", (change, field) => {
    const spec = structuredClone(lifecycle);
    change(spec);
    expect(specProblems(spec).map((p) => p.field)).toContain(field);
  });

  it("takes thresholds on declared metrics, and refuses them on undeclared ones", () => {
    expect(validSpec({ ...lifecycle, thresholds: { login_duration: ["p(95)<300"], login_success_rate: ["rate>0.99"] } }).thresholds).toBeDefined();
    expect(specProblems({ ...lifecycle, thresholds: { signup_duration: ["p(95)<300"] } }).map((p) => p.field)).toContain("thresholds.signup_duration");
  });
});

describe("spec validation of VU executors", () => {
  const base = { target: "http://127.0.0.1:9090", steps: [{ path: "/" }] };

  it("decodes constant-vus and ramping-vus with k6's defaults", () => {
    expect(validSpec({ ...base, executor: "constant-vus", vus: 10, duration: "30s" })).toMatchObject({
      vus: { startVUs: 10, stages: [{ target: 10, durationMs: 30_000 }], gracefulRampDownMs: 30_000 },
      stages: [],
      durationMs: 30_000,
      maxInFlight: 10,
      peakRatePerS: 0,
    });
    expect(
      validSpec({
        ...base,
        executor: "ramping-vus",
        stages: [
          { target: 5, duration: "10s" },
          { target: 0, duration: "5s" },
        ],
        gracefulRampDown: "3s",
      }),
    ).toMatchObject({
      vus: {
        startVUs: 1,
        stages: [
          { target: 5, durationMs: 10_000 },
          { target: 0, durationMs: 5_000 },
        ],
        gracefulRampDownMs: 3_000,
      },
      durationMs: 15_000,
      maxInFlight: 5,
    });
  });

  it.each([
    // [spec, field, why]
    [{ executor: "constant-vus", duration: "10s" }, "vus", "vus is required"],
    [{ executor: "constant-vus", vus: 1.5, duration: "10s" }, "vus", "whole VUs only"],
    [{ executor: "constant-vus", vus: 5, duration: "10s", rate: 10 }, "rate", "an arrival-rate option on a VU executor"],
    [{ executor: "ramping-vus", stages: [{ target: -1, duration: "1s" }] }, "stages.0.target", "negative VUs"],
    [{ executor: "ramping-vus", stages: [{ target: 2, duration: "1s" }], maxVUs: 5 }, "maxVUs", "maxVUs is for arrival-rate executors"],
    [{ executor: "constant-arrival-rate", rate: 5, duration: "10s", vus: 5 }, "vus", "vus is for VU executors"],
    [{ executor: "constant-vus", vus: 2, duration: "0s" }, "duration", "a run of 0 s"],
  ])("refuses %j at %s (%s)", (spec, field, _why) => {
    expect(specProblems({ ...base, ...spec }).map((p) => p.field)).toContain(field);
  });
});
