import { describe, expect, it } from "vitest";
import { reconcileDelivery, renderDelivery } from "./delivery.ts";

const sent = (perSecond: number[], step = "default") => perSecond.map((n, second) => ({ second, step, sent: n }));
const received = (perSecond: number[], step = "default") => perSecond.map((count, second) => ({ second, step, count }));

describe("reconcileDelivery", () => {
  it("matches second by second when everything arrived", () => {
    const d = reconcileDelivery(sent([50, 50, 50]), received([50, 50, 50]), { connectionErrors: 0, timeouts: 0 });
    expect(d.totals).toEqual({ sent: 150, received: 150, difference: 0, differenceShare: 0 });
    expect(d.rows.every((r) => r.difference === 0)).toBe(true);
    expect(d.findings).toEqual(["every request sent was received (150)"]);
  });

  it.each([
    // [client connection errors, timeouts, attribution, why]
    [10, 0, { connectionErrors: 10, timeouts: 0, unexplained: 0 }, "every missing request failed to connect: never reached the target"],
    [4, 3, { connectionErrors: 4, timeouts: 3, unexplained: 3 }, "some failed to connect, some timed out, 3 unexplained"],
    [0, 0, { connectionErrors: 0, timeouts: 0, unexplained: 10 }, "the client saw nothing wrong: lost on the way"],
  ])("attributes a difference of 10 with %i connection errors and %i timeouts (%s)", (connectionErrors, timeouts, attribution, _why) => {
    const d = reconcileDelivery(sent([100, 100]), received([95, 95]), { connectionErrors, timeouts });
    expect(d.totals.difference).toBe(10);
    expect(d.attribution).toEqual(attribution);
    expect(d.findings.join("\n")).toContain("over the 0.1% goal");
  });

  it("sees a request counted in the neighbouring second, and a target that received more", () => {
    const shifted = reconcileDelivery(sent([10, 10]), received([9, 11]), { connectionErrors: 0, timeouts: 0 });
    expect(shifted.findings).toContain("2 seconds differ but the totals match: requests counted in a neighbouring second");
    const extra = reconcileDelivery(sent([10]), received([12]), { connectionErrors: 0, timeouts: 0 });
    expect(extra.findings.join("\n")).toContain("the target received 2 more than the run sent");
  });

  it("keeps steps apart and prints totals, steps and the seconds that differ", () => {
    const d = reconcileDelivery([...sent([5, 5], "login"), ...sent([5, 5], "userinfo")], [...received([5, 5], "login"), ...received([5, 4], "userinfo")], {
      connectionErrors: 1,
      timeouts: 0,
    });
    expect(d.perStep).toEqual([
      { step: "login", sent: 10, received: 10, difference: 0 },
      { step: "userinfo", sent: 10, received: 9, difference: 1 },
    ]);
    const text = renderDelivery(d);
    expect(text).toContain("sent 20 · received 19 · difference 1 (5.000%)");
    expect(text).toContain("second 1 userinfo: sent 5 · received 4");
    expect(text).toContain("1 never reached the target");
  });
});
