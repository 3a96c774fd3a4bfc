/**
 * Bad input, generated: every parser at the edge answers anything it is given with a value
 * or with problems that name a field — it never throws (a throw at the API is a 500).
 * fast-check generates a few hundred cases per surface here; `npm run bench -- --only fuzz`
 * would take the same properties to ten thousand.
 *
 * The generators mix three kinds of input: anything JSON can hold, near-misses of a valid
 * document (one field replaced by junk), and strings of the surface's own alphabet.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parsePrometheusText, parseSeriesSelector } from "./prometheus.ts";
import { parseQuery } from "./query.ts";
import { readOnlySqlProblem } from "./read-only-sql.ts";
import { parseRunSpec } from "./run-spec.ts";
import { parseSeedSet } from "./seed-set.ts";
import { templateErrors } from "./template.ts";
import { parseThresholds } from "./thresholds.ts";

const RUNS = { numRuns: 300, seed: 20261125 } as const;

const VALID_SPEC = {
  target: "http://127.0.0.1:9090", steps: [{ name: "a", path: "/x", checks: [{ status: 200 }] }],
  executor: "constant-arrival-rate", rate: 10, duration: "5s", thresholds: { http_req_duration: ["p(95)<300"] },
};

/** A valid spec with one field (possibly nested) replaced by anything. */
const nearMissSpec = fc.tuple(
  fc.constantFrom("target", "steps", "executor", "rate", "duration", "thresholds", "regions", "shards", "timeout", "maxCost", "scenarios", "setup", "data", "metrics", "vars", "stages", "flow"),
  fc.jsonValue(),
).map(([key, value]) => ({ ...VALID_SPEC, [key]: value }));

const nearMissStep = fc.tuple(fc.constantFrom("path", "method", "headers", "body", "checks", "capture", "think", "record", "sse", "scrape", "weight", "expect"), fc.jsonValue())
  .map(([key, value]) => ({ ...VALID_SPEC, steps: [{ ...VALID_SPEC.steps[0], [key]: value }] }));

function expectProblemsNameFields(problems: ReadonlyArray<{ field: string; detail: string }>): void {
  expect(problems.length).toBeGreaterThan(0);
  for (const p of problems) {
    expect(typeof p.field).toBe("string");
    expect(p.field.length).toBeGreaterThan(0);
    expect(typeof p.detail).toBe("string");
    expect(p.detail.length).toBeGreaterThan(0);
  }
}

describe("fuzzed bad input never throws, and every problem names a field", () => {
  it.each([
    ["anything JSON can hold", fc.jsonValue()],
    ["a valid spec with one field replaced", nearMissSpec],
    ["a valid spec with one step field replaced", nearMissStep],
    ["named scenarios with junk inside", fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 3 }).map((scenarios) => ({ target: VALID_SPEC.target, scenarios }))],
  ])("run specs: %s", (_what, arbitrary) => {
    fc.assert(fc.property(arbitrary, (input) => {
      const r = parseRunSpec(input);
      if (!r.ok) expectProblemsNameFields(r.problems);
    }), RUNS);
  });

  it("thresholds: any metric key and any expression", () => {
    const expression = fc.oneof(fc.string(), fc.stringMatching(/^(p\(\d{1,3}(\.\d)?\)|avg|min|max|med|rate|count)\s?[<>=!]{1,2}\s?-?\d{0,6}(\.\d{0,3})?$/));
    const key = fc.oneof(fc.string(), fc.stringMatching(/^(http_req_duration|http_req_failed|checks|iterations)(\{[a-z]{1,6}:[a-z0-9]{0,6}\})?$/));
    fc.assert(fc.property(fc.dictionary(key, fc.array(fc.oneof(expression, fc.record({ threshold: expression, abortOnFail: fc.boolean() })), { maxLength: 3 }), { maxKeys: 4 }), (input) => {
      const r = parseThresholds(input);
      if (!r.ok) for (const e of r.errors) expect(e).toMatch(/^\S.*: .+/); // "field: problem"
    }), RUNS);
  });

  it("templates: any text with braces", () => {
    const text = fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("{{", "}}", "{{vars.", "{{secrets.", "{{randomInt(", "{{zipf(", ",", ")", "{{data.", "{{captured.", "{{setup.")), { maxLength: 12 }).map((parts) => parts.join(""));
    fc.assert(fc.property(text, (t) => {
      const errors = templateErrors(t, { vars: { a: "1" }, secrets: {}, captured: new Set(), setup: {}, data: false });
      for (const e of errors) expect(typeof e).toBe("string");
    }), RUNS);
  });

  it("seed uploads: anything, and near-misses of each kind", () => {
    const nearMiss = fc.tuple(fc.constantFrom("tokens", "users", "refresh_tokens", "sessions", "codes", "metadata"), fc.jsonValue()).map(([k, v]) => ({ [k]: v }));
    fc.assert(fc.property(fc.oneof(fc.jsonValue(), nearMiss, fc.array(fc.oneof(fc.string(), fc.jsonValue()), { maxLength: 5 })), (doc) => {
      const r = parseSeedSet(doc);
      if (!r.ok) expectProblemsNameFields(r.problems);
    }), RUNS);
  });

  it("Prometheus text: lines of the format's own alphabet", () => {
    const line = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.stringMatching(/^(# (TYPE|HELP|EOF) [a-z_]{0,8} ?(counter|gauge|histogram|untyped|summary)?|[a-z_:]{1,8}(\{[a-z]{1,4}="[^"\n]{0,4}"(,[a-z]{1,4}="[^\n]{0,3}")?\})? (-?\d{0,5}(\.\d{0,3})?|NaN|\+Inf|-Inf)( \d{0,13})?)$/),
    );
    fc.assert(fc.property(fc.array(line, { maxLength: 8 }), fc.boolean(), (lines, openMetrics) => {
      const r = parsePrometheusText(lines.join("\n"), { openMetrics });
      if (!r.ok) expect(r.problems.length).toBeGreaterThan(0);
    }), RUNS);
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (s) => {
      parseSeriesSelector(s);
    }), RUNS);
  });

  it("SQL for the query route: anything is either accepted as one read-only SELECT or refused with a reason", () => {
    const sql = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.array(fc.constantFrom("SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "DROP", "ATTACH", "PRAGMA", "*", "FROM", "runs", ";", "--", "/*", "*/", "'", "\"", "(", ")", "RECURSIVE", "x", "AS", "VALUES", "returning"), { maxLength: 10 }).map((w) => w.join(" ")),
    );
    fc.assert(fc.property(sql, (s) => {
      const problem = readOnlySqlProblem(s);
      if (problem !== null) expect(problem.length).toBeGreaterThan(0);
      if (problem === null) expect(s).toMatch(/^\s*(\(|\/\*[\s\S]*?\*\/|--[^\n]*\n|\s)*(SELECT|WITH|VALUES)\b/i);
    }), RUNS);
  });

  it("query parameters of /v1/runs/:id/query", () => {
    const param = fc.option(fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("region", "step,region", "shard,colo", "1s", "1m", "run", "p95,p99", "rps", "duration", "ttfb")), { nil: null });
    fc.assert(fc.property(param, param, param, param, (by, every, metrics, trend) => {
      const r = parseQuery({ by, every, metrics, trend });
      if (!r.ok) expectProblemsNameFields(r.problems);
    }), RUNS);
  });
});
