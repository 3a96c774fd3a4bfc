/**
 * exec.test.fail() beside k6 v1.8.1: the script marks the test failed, the run goes on to its
 * end (every iteration, teardown() and the summary still run, unlike exec.test.abort()), and
 * both exit 110, k6's MarkedAsFailed — also when a threshold failed too, as k6 returns the mark
 * and only logs the thresholds' error. Called in setup() or teardown() it counts the same.
 * (k6-compat/runtime/vu-modules/execution.ts → the window's script output → the coordinator's
 * RunRecord.markedFailed → core/run/run-end-status.ts → exit code 110.)
 */
import { expect, it } from "vitest";
import { countOf, scriptsBesideK6 } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

/** Every iteration marks the test failed and goes on to a request; teardown() still sends its own. */
const IN_DEFAULT = `
import http from "k6/http";
import exec from "k6/execution";
export const options = { vus: 1, iterations: 3 };
export default function () {
  exec.test.fail("soft check failed");
  http.get(__ENV.BASE_URL + "/healthz");
}
export function teardown() {
  http.get(__ENV.BASE_URL + "/healthz?teardown=1");
}
`;

/** setup() marks it; a threshold fails as well: k6 still exits 110, not 99. */
const IN_SETUP_WITH_FAILED_THRESHOLD = `
import http from "k6/http";
import exec from "k6/execution";
export const options = { vus: 1, iterations: 2, thresholds: { http_reqs: ["count<1"] } };
export function setup() {
  exec.test.fail();
}
export default function () {
  http.get(__ENV.BASE_URL + "/healthz");
}
`;

/** Only teardown() marks it, after every iteration passed. */
const IN_TEARDOWN = `
import http from "k6/http";
import exec from "k6/execution";
export const options = { vus: 1, iterations: 2 };
export default function () {
  http.get(__ENV.BASE_URL + "/healthz");
}
export function teardown() {
  exec.test.fail("found a leftover");
}
`;

const count = countOf;

describeWithK6("exec.test.fail(), beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-k6-test-fail-");
  const { both } = scriptsBesideK6(k6, fixture, { "in-default.js": IN_DEFAULT, "in-setup.js": IN_SETUP_WITH_FAILED_THRESHOLD, "in-teardown.js": IN_TEARDOWN });

  it("in the default function: the run goes on to its end, teardown() included, and exits 110 as k6 does", async () => {
    const [k6Run, edge] = await both("in-default.js");
    expect(k6Run.code, k6Run.output).toBe(110);
    expect(edge.code, edge.output).toBe(110);
    // Nothing stopped: three iterations and teardown()'s request, under both.
    expect(count(k6Run, "http_reqs")).toBe(4);
    expect(count(edge, "http_reqs"), edge.output).toBe(count(k6Run, "http_reqs"));
    expect(count(edge, "iterations")).toBe(count(k6Run, "iterations"));
    // k6's log line, and the reason the run ended failed.
    expect(edge.output).toContain("test marked as failed: soft check failed");
    expect(edge.output).toContain("marked failed by the script: soft check failed");
  });

  it("in setup(), with a threshold failed too: 110, not 99, as k6 does", async () => {
    const [k6Run, edge] = await both("in-setup.js");
    expect(k6Run.code, k6Run.output).toBe(110);
    expect(edge.code, edge.output).toBe(110);
    expect(k6Run.summary.metrics.http_reqs?.thresholds).toEqual({ "count<1": true });
    expect(edge.summary.metrics.http_reqs?.thresholds).toEqual(k6Run.summary.metrics.http_reqs?.thresholds);
  });

  it("in teardown() only: 110, as k6 does", async () => {
    const [k6Run, edge] = await both("in-teardown.js");
    expect(k6Run.code, k6Run.output).toBe(110);
    expect(edge.code, edge.output).toBe(110);
  });
});
