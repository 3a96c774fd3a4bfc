/**
 * k6 options that change how iterations behave (behaviour-options.ts, runtime/vu-options.ts):
 * checked before any load, carried into the run spec, and acted on by a VU over a scripted
 * host: a request's own timeout, `throw`, and k6's 60 s default request timeout for a script.
 */
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { behaviourProblems } from "./behaviour-options.ts";
import { specFromOptions } from "./options.ts";
import { requestThrows, requestTimeoutMs, vuOptions } from "./runtime/vu-options.ts";
import { createVuModules, type VuContext } from "./runtime/vu-modules.ts";
import type { IterationHost, WireRequest, WireResponse } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";

const ctx = { name: "s.js", target: "http://127.0.0.1:9090", bundle: "a".repeat(64), env: {}, metrics: {}, exports: ["default"] };

describe("behaviour options before any load", () => {
  it.each([
    // k6 skips certificate checks; a Worker's fetch() cannot: refused, saying why and what to do.
    [{ insecureSkipTLSVerify: true }, /insecureSkipTLSVerify: a Worker's fetch\(\) always verifies .* run this script under k6/],
    // k6 reads these as booleans and refuses anything else.
    [{ throw: "yes" }, /options.throw must be true or false, got "yes"/],
    [{ noCookiesReset: 1 }, /options.noCookiesReset must be true or false, got 1/],
    [{ minIterationDuration: "soon" }, /options.minIterationDuration: "soon" is not a duration/],
    [{ discardResponseBodies: "yes" }, /options.discardResponseBodies must be true or false, got "yes"/],
    // A Worker cannot send a name to another address: refused, saying why and what to do.
    [{ hosts: { "test.k6.io": "127.0.0.1" } }, /options.hosts: a Worker's fetch\(\) resolves a name through Cloudflare's DNS .* run this script under k6/],
  ])("refuses %j", (options, message) => {
    const r = specFromOptions({ vus: 1, duration: "1s", ...options }, ctx);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toMatch(message);
  });

  it("accepts the options it acts on, none of them listed as ignored, and insecureSkipTLSVerify: false", () => {
    const options = { throw: true, noCookiesReset: true, discardResponseBodies: true, insecureSkipTLSVerify: false, minIterationDuration: "2s", hosts: {} };
    expect(behaviourProblems(options)).toEqual([]);
    const r = specFromOptions({ vus: 1, duration: "1s", ...options }, ctx);
    expect(r.ok && r.ignored).toEqual([]);
  });

  it("carries minIterationDuration into every scenario's script, in ms once parsed, and refuses it inside a scenario as k6 does", () => {
    const scenarios = { a: { executor: "constant-vus", vus: 1, duration: "1s" }, b: { executor: "constant-arrival-rate", rate: 1, duration: "1s" } };
    const r = specFromOptions({ minIterationDuration: "1.5s", scenarios }, ctx);
    const parsed = r.ok ? parseRunSpec(r.spec) : null;
    expect(parsed?.ok && parsed.spec.scenarios!.map((s) => s.spec.script?.minIterationDuration)).toEqual([1_500, 1_500]);
    const inScenario = specFromOptions({ scenarios: { a: { ...scenarios.a, minIterationDuration: "1s" } } }, ctx);
    expect(inScenario.ok ? [] : inScenario.problems).toEqual([
      "options.scenarios.a.minIterationDuration: k6 takes it only at the options' top level; set options.minIterationDuration",
    ]);
  });

  it.each([
    // A script's requests wait k6's 60 s unless the spec's timeout (edgeload's --timeout) says.
    [{}, true, 60_000],
    [{ timeout: "5s" }, true, 5_000],
    // A spec's own steps keep edgeload's 10 s.
    [{}, false, 10_000],
  ])("times requests out at the spec's %j (script: %s) after %d ms", (extra, script, timeoutMs) => {
    const r = specFromOptions({ vus: 1, duration: "1s" }, ctx);
    const spec =
      script && r.ok
        ? { ...r.spec, ...extra }
        : { target: ctx.target, steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 1, duration: "1s", ...extra };
    const parsed = parseRunSpec(spec);
    expect(parsed.ok && parsed.spec.timeoutMs).toBe(timeoutMs);
  });
});

describe("a VU's options and a request's own", () => {
  it("reads throw, noCookiesReset and maxRedirects off the script's options, k6's defaults without them", () => {
    expect(vuOptions({ throw: true, noCookiesReset: true, maxRedirects: 2, discardResponseBodies: true })).toEqual({
      maxRedirects: 2,
      throws: true,
      keepsCookies: true,
      discardsBodies: true,
    });
    expect(vuOptions(undefined)).toEqual({ throws: false, keepsCookies: false, discardsBodies: false });
    // A request's params.throw wins over the options' either way.
    expect([requestThrows(undefined, true), requestThrows(false, true), requestThrows(true, false)]).toEqual([true, false, true]);
  });

  it.each([
    ["5s", 5_000],
    ["1m30s", 90_000],
    ["250ms", 250],
    // A number, or a string of digits, is milliseconds, as k6 reads it.
    [1500, 1_500],
    ["1500", 1_500],
    [undefined, undefined],
  ])("reads params.timeout %j as %s ms", (value, ms) => {
    expect(requestTimeoutMs(value)).toBe(ms);
  });

  it.each([["soon"], [0], [-5], [{}]])("refuses params.timeout %j, naming it", (value) => {
    expect(() => requestTimeoutMs(value)).toThrow(/params.timeout must be a duration like "5s" or "500ms", or a number of ms above 0/);
  });
});

/** A VU over a host that answers each request with `respond`'s fields over a 200. */
function vu(respond: (r: WireRequest) => Partial<WireResponse>, options: Partial<Pick<VuContext, "throws">> = {}) {
  const sent: WireRequest[] = [];
  const host: IterationHost = {
    async send(_samples, request) {
      sent.push(request);
      return { status: 200, error: null, headers: {}, setCookies: [], body: "ok", durationMs: 3, ...respond(request) };
    },
    async sleep() {},
    ...noSockets,
  };
  const context = vuContext(host, { ...options });
  return { http: (createVuModules(context) as Record<string, any>)["k6/http"], sent };
}

const timedOut = () => ({ status: 0, error: "timeout" as const, body: null });

describe("k6/http with these options", () => {
  it("sends params.timeout to the shard in ms, and nothing without it (the run's timeout applies)", async () => {
    const v = vu(() => ({}));
    await v.http.get("http://127.0.0.1/x", { timeout: "2s" });
    await v.http.post("http://127.0.0.1/x", "b", { timeout: 750 });
    await v.http.get("http://127.0.0.1/x");
    expect(v.sent.map((r) => r.timeoutMs)).toEqual([2_000, 750, undefined]);
    await expect(v.http.get("http://127.0.0.1/x", { timeout: "later" })).rejects.toThrow(/params.timeout must be a duration/);
  });

  it("throws with options.throw when a request gets no response, as k6 throws Go's error: its method, URL and reason", async () => {
    const v = vu(timedOut, { throws: true });
    await expect(v.http.get("http://127.0.0.1/slow", { timeout: "1s" })).rejects.toThrow('Get "http://127.0.0.1/slow": request timeout');
    const refused = vu(() => ({ status: 0, error: "connection", body: null }), { throws: true });
    await expect(refused.http.post("http://127.0.0.1:1/", "x")).rejects.toThrow('Post "http://127.0.0.1:1/": connection error');
  });

  it("does not throw for a response of any status, nor without throw, nor when params.throw is false", async () => {
    const failing = vu(() => ({ status: 503 }), { throws: true });
    expect((await failing.http.get("http://127.0.0.1/x")).status).toBe(503);
    const res = await vu(timedOut).http.get("http://127.0.0.1/x");
    expect([res.status, res.error_code, res.error]).toEqual([0, 1050, "request timeout"]);
    const overridden = await vu(timedOut, { throws: true }).http.get("http://127.0.0.1/x", { throw: false });
    expect(overridden.error_code).toBe(1050);
    // params.throw alone makes it throw, without the option.
    await expect(vu(timedOut).http.get("http://127.0.0.1/x", { throw: true })).rejects.toThrow(/request timeout/);
  });
});
