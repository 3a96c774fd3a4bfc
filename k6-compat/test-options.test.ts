/**
 * exec.test.options as k6 v1.8.1 gives it (test-options.ts): each row's expected JSON is what
 * real k6 printed for `JSON.stringify(exec.test.options)` (or its `scenarios`) with those
 * options, byte for byte, key order included (recorded 2026-12-07 with .cache/k6/bin/k6).
 */
import { describe, expect, it } from "vitest";
import { goDuration, k6TestOptions } from "./test-options.ts";

const SYSTEM_TAGS =
  '["check","error","error_code","expected_response","group","method","name","proto","scenario","service","status","subproto","tls_version","url"]';

/** k6's whole object for `{ vus: 2, duration: "1s", thresholds: { checks: ["rate>0.9"] } }`. */
const CONSTANT_VUS_WHOLE =
  '{"paused":null,"scenarios":{"default":{"executor":"constant-vus","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"vus":2,"duration":"1s"}},' +
  '"executionSegment":null,"executionSegmentSequence":null,"noSetup":null,"setupTimeout":null,"noTeardown":null,"teardownTimeout":null,"rps":null,' +
  '"dns":{"ttl":null,"select":null,"policy":null},"maxRedirects":null,"userAgent":null,"batch":null,"batchPerHost":null,"httpDebug":null,' +
  '"insecureSkipTLSVerify":null,"tlsCipherSuites":null,"tlsVersion":null,"tlsAuth":null,"throw":null,"thresholds":{"checks":["rate>0.9"]},' +
  '"blacklistIPs":null,"blockHostnames":null,"hosts":null,"noConnectionReuse":null,"noVUConnectionReuse":null,"minIterationDuration":null,"ext":null,' +
  `"summaryTrendStats":["avg","min","med","max","p(90)","p(95)"],"summaryTimeUnit":null,"systemTags":${SYSTEM_TAGS},"tags":null,` +
  '"metricSamplesBufferSize":null,"noCookiesReset":null,"discardResponseBodies":null,"consoleOutput":null,"localIPs":null}';

describe("exec.test.options, as k6 shows it", () => {
  it("is the whole of lib.Options, unset ones null, the shortcuts gone into scenarios.default", () => {
    expect(JSON.stringify(k6TestOptions({ vus: 2, duration: "1s", thresholds: { checks: ["rate>0.9"] } }))).toBe(CONSTANT_VUS_WHOLE);
  });

  it.each([
    // iterations alone: shared-iterations, vus left null (k6 fills 1 in later, not here).
    [
      { iterations: 3 },
      '{"default":{"executor":"shared-iterations","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"vus":null,"iterations":3,"maxDuration":null}}',
    ],
    // iterations with duration: the duration is the scenario's maxDuration.
    [
      { vus: 2, iterations: 3, duration: "5s" },
      '{"default":{"executor":"shared-iterations","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"vus":2,"iterations":3,"maxDuration":"5s"}}',
    ],
    // duration alone: constant-vus.
    [
      { duration: "1s" },
      '{"default":{"executor":"constant-vus","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"vus":null,"duration":"1s"}}',
    ],
    // stages: ramping-vus, vus as its startVUs.
    [
      { vus: 3, stages: [{ duration: "1s", target: 2 }] },
      '{"default":{"executor":"ramping-vus","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"startVUs":3,"stages":[{"duration":"1s","target":2}],"gracefulRampDown":null}}',
    ],
    // no load options at all: per-vu-iterations, every field null (one VU, one iteration).
    [
      {},
      '{"default":{"executor":"per-vu-iterations","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"vus":null,"iterations":null,"maxDuration":null}}',
    ],
    // named scenarios, each with its executor's fields in k6's order, durations in Go's form.
    [
      {
        scenarios: {
          r: {
            executor: "ramping-arrival-rate",
            startRate: 1,
            timeUnit: "1m",
            preAllocatedVUs: 1,
            maxVUs: 2,
            stages: [{ duration: "1s", target: 1 }],
            gracefulStop: "5s",
            startTime: "0s",
            env: { K: "V" },
          },
          v: { executor: "ramping-vus", stages: [{ duration: 1000, target: 1 }], gracefulRampDown: "2m30s" },
          b: { executor: "per-vu-iterations", vus: 1, iterations: 1, exec: "default", tags: { x: "y" } },
          a: { executor: "constant-arrival-rate", rate: 2, duration: "1s", preAllocatedVUs: 1 },
        },
      },
      '{"r":{"executor":"ramping-arrival-rate","startTime":"0s","gracefulStop":"5s","env":{"K":"V"},"exec":null,"tags":null,"startRate":1,"timeUnit":"1m0s","stages":[{"duration":"1s","target":1}],"preAllocatedVUs":1,"maxVUs":2},' +
        '"v":{"executor":"ramping-vus","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"startVUs":null,"stages":[{"duration":"1s","target":1}],"gracefulRampDown":"2m30s"},' +
        '"b":{"executor":"per-vu-iterations","startTime":null,"gracefulStop":null,"env":null,"exec":"default","tags":{"x":"y"},"vus":1,"iterations":1,"maxDuration":null},' +
        '"a":{"executor":"constant-arrival-rate","startTime":null,"gracefulStop":null,"env":null,"exec":null,"tags":null,"rate":2,"timeUnit":null,"duration":"1s","preAllocatedVUs":1,"maxVUs":null}}',
    ],
  ])("scenarios of %j", (options, scenarios) => {
    expect(JSON.stringify(k6TestOptions(options).scenarios)).toBe(scenarios);
  });

  it("shows durations in Go's form, thresholds as k6 marshals them, cloud only when set", () => {
    const shown = k6TestOptions({
      setupTimeout: "90s",
      teardownTimeout: 1500,
      minIterationDuration: "100ms",
      thresholds: { checks: [{ threshold: "rate>0.9", abortOnFail: true }], http_reqs: [{ threshold: "count>1", delayAbortEval: "10s" }] },
      dns: { ttl: "5m" },
      cloud: { projectID: 1 },
    });
    expect(shown).toMatchObject({
      setupTimeout: "1m30s",
      teardownTimeout: "1.5s",
      minIterationDuration: "100ms",
      // One that does not abort is its expression alone.
      thresholds: { checks: [{ threshold: "rate>0.9", abortOnFail: true, delayAbortEval: null }], http_reqs: ["count>1"] },
      dns: { ttl: "5m", select: null, policy: null },
    });
    // k6 puts cloud between minIterationDuration and ext.
    const keys = Object.keys(shown);
    expect(keys.slice(keys.indexOf("minIterationDuration"), keys.indexOf("ext") + 1)).toEqual(["minIterationDuration", "cloud", "ext"]);
    expect("cloud" in k6TestOptions({})).toBe(false);
  });

  it.each([
    // [ms, Go's time.Duration.String()]
    [0, "0s"],
    [0.0005, "500ns"],
    [0.0015, "1.5µs"],
    [1.5, "1.5ms"],
    [100, "100ms"],
    [1000, "1s"],
    [1500, "1.5s"],
    [60_000, "1m0s"],
    [150_000, "2m30s"],
    [3_600_000, "1h0m0s"],
    [3_723_500, "1h2m3.5s"],
  ])("formats %d ms as %s", (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });
});
