/**
 * k6's externally-controlled executor in a run spec (executor-schema.ts, run-spec.ts,
 * named-scenarios.ts): its options as k6 reads them, a plan sized for maxVUs, and k6's
 * refusals (a gracefulStop, no duration, more VUs than maxVUs, another scenario beside it).
 */
import { describe, expect, it } from "vitest";
import { specProblems, validSpec } from "../../test/support/run-spec-fixtures.ts";
import { VuSchedule } from "../schedule/vu-schedule.ts";
import { planRun } from "../plan/plan.ts";

const base = { target: "http://127.0.0.1:9090", steps: [{ path: "/" }], executor: "externally-controlled" };

describe("externally-controlled in a run spec", () => {
  it("holds maxVUs for its duration (what the plan sizes and prices) and starts at vus", () => {
    const spec = validSpec({ ...base, vus: 2, maxVUs: 10, duration: "1m" });
    expect(spec.executor).toBe("externally-controlled");
    expect(spec.vus).toEqual({ startVUs: 10, stages: [{ target: 10, durationMs: 60_000 }], gracefulRampDownMs: 0, externallyControlled: { startVUs: 2 } });
    expect(spec.durationMs).toBe(60_000);
    expect(spec.maxInFlight).toBe(10);
    // k6 cuts its iterations at the end: no graceful stop.
    expect(spec.gracefulStopMs).toBe(0);
    expect(new VuSchedule(spec.vus!).vuSeconds()).toBe(600);
  });

  it("is planned as constant-vus at maxVUs would be: the same shards, VU-seconds and estimate, since it may be scaled there", () => {
    const controlled = validSpec({ ...base, vus: 1, maxVUs: 400, duration: "1m" });
    const atMax = validSpec({ ...base, executor: "constant-vus", vus: 400, duration: "1m" });
    const [a, b] = [planRun(controlled, 0), planRun(atMax, 0)];
    if (!a.ok || !b.ok) throw new Error("both plan");
    expect(a.plan.shards.length).toBeGreaterThan(1);
    expect(a.plan.shards).toEqual(b.plan.shards);
    expect(a.plan.closedModel).toEqual(b.plan.closedModel);
    expect(a.plan.totalIterations).toBe(b.plan.totalIterations);
  });

  it("is refused above the deployment's VU cap at maxVUs, naming maxVUs", () => {
    const planned = planRun(validSpec({ ...base, vus: 1, maxVUs: 20_000, duration: "1m" }), 0);
    expect(planned.ok ? [] : planned.problems).toContainEqual({ field: "maxVUs", detail: "20000 VUs exceed this deployment's cap of 5000" });
  });

  it("takes k6's defaults: vus 0, maxVUs = vus", () => {
    expect(validSpec({ ...base, vus: 3, duration: "10s" }).vus).toMatchObject({ startVUs: 3, externallyControlled: { startVUs: 3 } });
    expect(validSpec({ ...base, maxVUs: 4, duration: "10s" }).vus).toMatchObject({ startVUs: 4, externallyControlled: { startVUs: 0 } });
  });

  it.each([
    // [options, field, detail]
    [{ vus: 5, maxVUs: 2, duration: "1m" }, "vus", /at most maxVUs/],
    [{ vus: 0, duration: "1m" }, "maxVUs", /at least 1/],
    [{ vus: 1 }, "duration", /required: how long the run lasts/],
    [{ vus: 1, duration: "0s" }, "duration", /k6's 0, no end, is not supported/],
    [{ vus: 1, duration: "1m", gracefulStop: "10s" }, "gracefulStop", /not an option of the externally-controlled executor/],
    [{ vus: 1, duration: "1m", preAllocatedVUs: 3 }, "preAllocatedVUs", /applies to arrival-rate executors/],
    [{ vus: -1, maxVUs: 2, duration: "1m" }, "vus", /greater than or equal to 0|too small|>=0/i],
  ])("refuses %j at %s", (options, field, detail) => {
    const found = specProblems({ ...base, ...options });
    const problem = found.find((p) => p.field === field);
    expect(problem, JSON.stringify(found)).toBeDefined();
    expect(problem!.detail).toMatch(detail);
  });

  it("runs alone: with another scenario it is refused, naming it", () => {
    const found = specProblems({
      target: base.target,
      scenarios: {
        ctl: { executor: "externally-controlled", vus: 1, maxVUs: 2, duration: "30s", steps: base.steps },
        other: { executor: "constant-vus", vus: 1, duration: "30s", steps: base.steps },
      },
    });
    expect(found).toContainEqual({ field: "scenarios.ctl.executor", detail: expect.stringMatching(/runs alone/) });
  });

  it("is accepted as the one scenario of a run of named scenarios", () => {
    const spec = validSpec({
      target: base.target,
      scenarios: { ctl: { executor: "externally-controlled", vus: 1, maxVUs: 2, duration: "30s", steps: base.steps } },
    });
    expect(spec.scenarios?.[0]?.spec.executor).toBe("externally-controlled");
  });
});
