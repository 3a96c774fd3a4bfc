import { describe, expect, it } from "vitest";
import { CheckResults, groupTree, MAX_CHECK_RESULTS } from "./check-results.ts";
import { MetricStats } from "./metric-stats.ts";

describe("CheckResults", () => {
  it("counts each check by group and name, and merges exactly through the wire in any order", () => {
    const a = new MetricStats();
    const b = new MetricStats();
    a.checkResults.record("::login", "status 200", true);
    a.checkResults.record("::login", "status 200", false);
    b.checkResults.record("::login", "status 200", true);
    b.checkResults.record("", "body has token", true);
    const ab = MetricStats.fromWire(a.toWire()).merge(MetricStats.fromWire(b.toWire()));
    const ba = MetricStats.fromWire(b.toWire()).merge(a);
    const byPath = (s: MetricStats) => Object.fromEntries(s.checkResults.results().map((c) => [`${c.group}::${c.name}`, [c.passes, c.fails]]));
    expect(byPath(ab)).toEqual({ "::login::status 200": [2, 1], "::body has token": [1, 0] });
    expect(byPath(ba)).toEqual(byPath(ab));
  });

  it(`keeps ${MAX_CHECK_RESULTS} distinct checks and counts the rest together, so checks named after data cannot grow a window`, () => {
    const c = new CheckResults();
    for (let i = 0; i < MAX_CHECK_RESULTS + 50; i++) c.record("", `status of ${i}`, i % 2 === 0);
    expect(c.results()).toHaveLength(MAX_CHECK_RESULTS);
    expect([c.othersPassed, c.othersFailed]).toEqual([25, 25]);
    expect(new CheckResults().mergeWire(c.toWire()).toWire()).toEqual(c.toWire());
  });
});

describe("groupTree", () => {
  it("nests checks under their groups as k6's root_group does", () => {
    const tree = groupTree([
      { group: "::outer", name: "ok", passes: 3, fails: 0 },
      { group: "::outer::inner", name: "never", passes: 0, fails: 3 },
      { group: "", name: "top", passes: 1, fails: 1 },
    ]);
    expect(tree).toEqual({
      name: "",
      path: "",
      checks: { top: { name: "top", path: "::top", passes: 1, fails: 1 } },
      groups: {
        outer: {
          name: "outer",
          path: "::outer",
          checks: { ok: { name: "ok", path: "::outer::ok", passes: 3, fails: 0 } },
          groups: {
            inner: {
              name: "inner",
              path: "::outer::inner",
              groups: {},
              checks: { never: { name: "never", path: "::outer::inner::never", passes: 0, fails: 3 } },
            },
          },
        },
      },
    });
  });
});
