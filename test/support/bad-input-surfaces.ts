/**
 * Every parser at the edge, with a generator of bad input for it and what must hold of its
 * answer: it never throws (a throw at the API is a 500), and every problem it reports names
 * a field. The same surfaces run a few hundred cases each in `npm test`
 * (core/bad-input.fuzz.test.ts) and ten thousand in `npm run bench -- --only fuzz`.
 *
 * The generators mix three kinds of input: anything JSON can hold, near-misses of a valid
 * document (one field replaced by junk), and strings of the surface's own alphabet. SQL also
 * gets walk-arounds of the read-only filter, and what the filter accepts is judged by SQLite
 * (sql-walk-arounds.ts).
 */
import fc from "fast-check";
import { parsePrometheusText } from "../../core/formats/prometheus-text-parser.ts";
import { parseSeriesSelector } from "../../core/formats/series-selector.ts";
import { parseQuery } from "../../core/results/query.ts";
import { readOnlySqlProblem } from "../../core/results/read-only-sql.ts";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { parseSeedSet } from "../../core/data/seed-set.ts";
import { templateErrors } from "../../core/spec/template.ts";
import { parseThresholds } from "../../core/metrics/thresholds.ts";
import { resultsSchemaDatabase, sqliteObjection, walkAroundAttempt } from "./sql-walk-arounds.ts";

export interface BadInputSurface<T = unknown> {
  readonly name: string;
  readonly input: fc.Arbitrary<T>;
  /** What is wrong with the parser's answer to `input`, or null. Throws if the parser does. */
  readonly check: (input: T) => string | null;
}

const VALID_SPEC = {
  target: "http://127.0.0.1:9090",
  steps: [{ name: "a", path: "/x", checks: [{ status: 200 }] }],
  executor: "constant-arrival-rate",
  rate: 10,
  duration: "5s",
  thresholds: { http_req_duration: ["p(95)<300"] },
};

function problemsNameFields(problems: ReadonlyArray<{ field: string; detail: string }>): string | null {
  if (problems.length === 0) return "refused without a problem";
  const bad = problems.find((p) => typeof p.field !== "string" || p.field.length === 0 || typeof p.detail !== "string" || p.detail.length === 0);
  return bad ? `a problem names no field: ${JSON.stringify(bad)}` : null;
}

const specCheck = (input: unknown) => {
  const r = parseRunSpec(input);
  return r.ok ? null : problemsNameFields(r.problems);
};

/**
 * SQL for the query route: refused with a reason, or accepted and then judged by SQLite
 * itself (sql-walk-arounds.ts), not by a second copy of the filter's rules.
 */
let resultsDb: ReturnType<typeof resultsSchemaDatabase> | undefined;
function sqlCheck(sql: string): string | null {
  const problem = readOnlySqlProblem(sql);
  if (problem !== null) return problem.length > 0 ? null : "refused without a reason";
  resultsDb ??= resultsSchemaDatabase();
  const objection = sqliteObjection(resultsDb, sql);
  return objection ? `accepted as read-only, but ${objection}` : null;
}

const surface = <T>(name: string, input: fc.Arbitrary<T>, check: (input: T) => string | null): BadInputSurface => ({
  name,
  input,
  check: check as (input: unknown) => string | null,
});

export const BAD_INPUT_SURFACES: readonly BadInputSurface[] = [
  surface("run spec: anything JSON can hold", fc.jsonValue(), specCheck),
  surface(
    "run spec: one field replaced",
    fc
      .tuple(
        fc.constantFrom(
          "target",
          "steps",
          "executor",
          "rate",
          "duration",
          "thresholds",
          "regions",
          "shards",
          "timeout",
          "maxCost",
          "scenarios",
          "setup",
          "data",
          "metrics",
          "vars",
          "stages",
          "flow",
          "outputs",
        ),
        fc.jsonValue(),
      )
      .map(([key, value]) => ({ ...VALID_SPEC, [key]: value })),
    specCheck,
  ),
  surface(
    "run spec: one step field replaced",
    fc
      .tuple(fc.constantFrom("path", "method", "headers", "body", "checks", "capture", "think", "record", "sse", "scrape", "weight", "expect"), fc.jsonValue())
      .map(([key, value]) => ({ ...VALID_SPEC, steps: [{ ...VALID_SPEC.steps[0], [key]: value }] })),
    specCheck,
  ),
  surface(
    "named scenarios with junk inside",
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 3 }).map((scenarios) => ({ target: VALID_SPEC.target, scenarios })),
    specCheck,
  ),
  surface(
    "thresholds",
    fc.dictionary(
      fc.oneof(fc.string(), fc.stringMatching(/^(http_req_duration|http_req_failed|checks|iterations)(\{[a-z]{1,6}:[a-z0-9]{0,6}\})?$/)),
      fc.array(
        fc.oneof(
          fc.string(),
          fc.stringMatching(/^(p\(\d{1,3}(\.\d)?\)|avg|min|max|med|rate|count)\s?[<>=!]{1,2}\s?-?\d{0,6}(\.\d{0,3})?$/),
          fc.record({ threshold: fc.string(), abortOnFail: fc.boolean() }),
        ),
        { maxLength: 3 },
      ),
      { maxKeys: 4 },
    ),
    (input) => {
      const r = parseThresholds(input);
      if (r.ok) return null;
      const bad = r.errors.find((e) => !/^\S.*: .+/.test(e));
      return bad ? `a threshold problem names no field: ${bad}` : null;
    },
  ),
  surface(
    "templates",
    fc
      .array(
        fc.oneof(
          fc.string({ maxLength: 6 }),
          fc.constantFrom("{{", "}}", "{{vars.", "{{secrets.", "{{randomInt(", "{{zipf(", ",", ")", "{{data.", "{{captured.", "{{setup."),
        ),
        { maxLength: 12 },
      )
      .map((parts) => parts.join("")),
    (text) => {
      const errors = templateErrors(text, { vars: { a: "1" }, secrets: {}, captured: new Set(), setup: {}, data: false });
      return errors.every((e) => typeof e === "string" && e.length > 0) ? null : "an empty template problem";
    },
  ),
  surface(
    "seed uploads",
    fc.oneof(
      fc.jsonValue(),
      fc.tuple(fc.constantFrom("tokens", "users", "refresh_tokens", "sessions", "codes", "metadata"), fc.jsonValue()).map(([k, v]) => ({ [k]: v })),
      fc.array(fc.oneof(fc.string(), fc.jsonValue()), { maxLength: 5 }),
    ),
    (doc) => {
      const r = parseSeedSet(doc);
      return r.ok ? null : problemsNameFields(r.problems);
    },
  ),
  surface(
    "Prometheus text",
    fc.tuple(
      fc.array(
        fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.stringMatching(
            /^(# (TYPE|HELP|EOF) [a-z_]{0,8} ?(counter|gauge|histogram|untyped|summary)?|[a-z_:]{1,8}(\{[a-z]{1,4}="[^"\n]{0,4}"(,[a-z]{1,4}="[^\n]{0,3}")?\})? (-?\d{0,5}(\.\d{0,3})?|NaN|\+Inf|-Inf)( \d{0,13})?)$/,
          ),
        ),
        { maxLength: 8 },
      ),
      fc.boolean(),
    ),
    ([lines, openMetrics]) => {
      const r = parsePrometheusText(lines.join("\n"), { openMetrics });
      return r.ok || r.problems.length > 0 ? null : "refused without a problem";
    },
  ),
  surface("series selectors", fc.string({ maxLength: 40 }), (s) => {
    const r = parseSeriesSelector(s);
    return r.ok || r.error.detail.length > 0 ? null : "refused without a reason";
  }),
  surface(
    "SQL for the query route",
    fc.oneof(
      fc.string({ maxLength: 60 }),
      fc
        .array(
          fc.constantFrom(
            "SELECT",
            "WITH",
            "INSERT",
            "UPDATE",
            "DELETE",
            "DROP",
            "ATTACH",
            "PRAGMA",
            "*",
            "FROM",
            "runs",
            ";",
            "--",
            "/*",
            "*/",
            "'",
            '"',
            "(",
            ")",
            "RECURSIVE",
            "x",
            "AS",
            "VALUES",
            "returning",
          ),
          { maxLength: 10 },
        )
        .map((w) => w.join(" ")),
    ),
    sqlCheck,
  ),
  surface("SQL walk-arounds spliced into a SELECT", walkAroundAttempt, sqlCheck),
  surface(
    "query parameters",
    fc.tuple(
      ...Array.from({ length: 4 }, () =>
        fc.option(
          fc.oneof(
            fc.string({ maxLength: 20 }),
            fc.constantFrom("region", "step,region", "shard,colo", "1s", "1m", "run", "p95,p99", "rps", "duration", "ttfb"),
          ),
          { nil: null },
        ),
      ),
    ),
    ([by, every, metrics, trend]) => {
      const r = parseQuery({ by, every, metrics, trend });
      return r.ok ? null : problemsNameFields(r.problems);
    },
  ),
];

/** Runs one surface for `numRuns` cases; throws (with fast-check's counterexample) on a failure. */
export function fuzzSurface(s: BadInputSurface, numRuns: number, seed = 20261125): void {
  fc.assert(
    fc.property(s.input, (input) => {
      const failure = s.check(input);
      if (failure) throw new Error(failure);
    }),
    { numRuns, seed },
  );
}
