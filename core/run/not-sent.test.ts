import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { planRun } from "../plan/plan.ts";
import { validSpec } from "../../test/support/run-spec-fixtures.ts";
import { MetricStats } from "../metrics/metric-stats.ts";
import { RunTotals } from "./run-totals.ts";
import { DEFAULT_MAX_NOT_SENT_SHARE, notSentOf, notSentReason, notSentText, percent, scheduledIterations } from "./not-sent.ts";

const TARGET = "http://127.0.0.1:9090";

function planned(raw: Record<string, unknown>) {
  const spec = validSpec({ target: TARGET, ...raw });
  const result = planRun(spec, new ArrivalSchedule(spec.stages).total);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return { spec, plan: result.plan };
}

/** Stats with these counters, under `step`. */
function counted(totals: RunTotals, step: number, counters: Partial<Record<"iterations" | "interrupted" | "unstarted", number>>) {
  const s = new MetricStats();
  Object.assign(s.counters, counters);
  totals.add(0, "wnam", step, s);
}

describe("scheduledIterations", () => {
  it("is an arrival-rate run's planned total, whatever was sent", () => {
    const { spec, plan } = planned({ steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 40, duration: "5s" });
    const totals = new RunTotals();
    counted(totals, 0, { iterations: 150, interrupted: 50 });
    expect(scheduledIterations(spec, plan, totals)).toBe(200);
  });

  it("is a VU run's finished iterations plus what edgeload did not send (its plan is only an estimate)", () => {
    const { spec, plan } = planned({ steps: [{ path: "/" }], executor: "constant-vus", vus: 5, duration: "5s" });
    const totals = new RunTotals();
    counted(totals, 0, { iterations: 95, interrupted: 5 });
    expect(scheduledIterations(spec, plan, totals)).toBe(100);
  });

  it("adds up a run of named scenarios, each by its own model", () => {
    const { spec, plan } = planned({
      scenarios: {
        vus: { executor: "constant-vus", vus: 2, duration: "5s", steps: [{ path: "/a" }] },
        rate: { executor: "constant-arrival-rate", rate: 10, duration: "5s", steps: [{ path: "/b" }] },
      },
    });
    const totals = new RunTotals();
    counted(totals, 0, { iterations: 48, interrupted: 2 }); // the VU scenario's step
    counted(totals, 1, { iterations: 40, interrupted: 10 }); // the arrival-rate one's: 50 planned
    expect(scheduledIterations(spec, plan, totals)).toBe(50 + 50);
  });
});

describe("notSentOf and its words", () => {
  it("counts restarts and late starts against the schedule, with the default bound when the spec sets none", () => {
    expect(notSentOf({ interrupted: 30, unstarted: 2 }, 1_000, undefined)).toEqual({
      count: 32,
      restarts: 30,
      unstarted: 2,
      scheduled: 1_000,
      share: 0.032,
      bound: DEFAULT_MAX_NOT_SENT_SHARE,
    });
    // Nothing scheduled (a VU run that sent nothing): no share to speak of, not NaN.
    expect(notSentOf({ interrupted: 0, unstarted: 0 }, 0, 0.05)).toMatchObject({ share: 0, bound: 0.05 });
  });

  it("has a reason only above the bound", () => {
    expect(notSentReason(notSentOf({ interrupted: 10, unstarted: 0 }, 1_000, undefined))).toBeNull();
    expect(notSentReason(notSentOf({ interrupted: 0, unstarted: 0 }, 1_000, 0))).toBeNull();
    expect(notSentReason(notSentOf({ interrupted: 0, unstarted: 11 }, 1_000, undefined))).toBe(
      "edgeload did not send 1.1 % of the schedule (11 of 1,000 iterations: never started before a shard's deadline); above the 1 % bound, so the run cannot pass",
    );
  });

  it("tells the figure with its causes", () => {
    expect(notSentText(notSentOf({ interrupted: 300, unstarted: 20 }, 10_000, undefined))).toBe(
      "320 (3.2 % of 10,000): 300 lost to shard restarts, 20 never started before a shard's deadline; bound 1 %",
    );
  });

  it.each([
    [0.032, "3.2 %"],
    [0.01, "1 %"],
    [0.0005, "0.05 %"],
    [1 / 3, "33 %"],
    [1, "100 %"],
  ])("percent(%d) → %s", (share, text) => {
    expect(percent(share)).toBe(text);
  });
});
