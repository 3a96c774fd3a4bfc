/**
 * What a tool did with a corpus script, as a k6 user reads it (exit code, checks, each
 * threshold's verdict, the script's own metrics), and how two such outcomes compare. Iteration
 * and check counts depend on timing, so they are compared with a tolerance that holds on a busy
 * 2-core machine; exact agreement belongs to a benchmark.
 */

/** k6's --summary-export layout (edgeload writes the same). */
export interface SummaryExport {
  readonly metrics: Record<string, { count?: number; passes?: number; fails?: number; thresholds?: Record<string, boolean> }>;
}

export type ChecksVerdict = "none" | "all passed" | "some failed";

export interface Outcome {
  readonly exit: number;
  readonly checks: { readonly verdict: ChecksVerdict; readonly passes: number; readonly fails: number };
  /** `metric expression` → "passed" | "failed". */
  readonly thresholds: Readonly<Record<string, "passed" | "failed">>;
  /** The script's own metrics and the ws_ ones k6's WebSocket modules emit (not k6's other built-in ones), sorted. */
  readonly metrics: readonly string[];
  readonly iterations: number;
  readonly durationMs: number;
  /** The tool's output, cut to its last lines, to explain a difference. */
  readonly tail: string;
}

/**
 * k6's built-in metrics, by name or prefix: everything else in a summary is the script's. The
 * ws_ metrics are compared too: a WebSocket script under edgeload should report k6's.
 */
const BUILT_IN = /^(http_req|http_reqs$|iteration|dropped_iterations$|vus|data_|checks$|group_duration$|grpc_|browser_|edgeload)/;

export function outcomeOf(exit: number, summary: SummaryExport | null, output: string, durationMs: number): Outcome {
  const metrics = summary?.metrics ?? {};
  const c = metrics.checks;
  const passes = c?.passes ?? 0;
  const fails = c?.fails ?? 0;
  const verdict: ChecksVerdict = passes + fails === 0 ? "none" : fails === 0 ? "all passed" : "some failed";
  const thresholds: Record<string, "passed" | "failed"> = {};
  for (const [key, m] of Object.entries(metrics))
    for (const [expression, failed] of Object.entries(m.thresholds ?? {})) thresholds[`${key} ${expression}`] = failed ? "failed" : "passed";
  return {
    exit,
    checks: { verdict, passes, fails },
    thresholds,
    metrics: Object.keys(metrics)
      .filter((name) => !name.includes("{") && !BUILT_IN.test(name))
      .sort(),
    iterations: metrics.iterations?.count ?? 0,
    durationMs,
    tail: output.split("\n").filter(Boolean).slice(-12).join("\n"),
  };
}

export interface Comparison {
  readonly exit: boolean;
  readonly checksVerdict: boolean;
  /** Check counts within the script's CountTolerance: runs of a duration see different iteration counts. */
  readonly checkCounts: boolean;
  /** Iteration counts within the same tolerance. */
  readonly iterations: boolean;
  readonly thresholds: boolean;
  readonly metrics: boolean;
  /** The parity the issue asks for: k6's exit code and the same checks verdict. */
  readonly parity: boolean;
  /** Every figure agrees. */
  readonly same: boolean;
}

/**
 * How counts are compared: "exact" (a set number of iterations, as most browser scripts run: a
 * check one tool made and the other did not is a difference, however few); "timing" within
 * max(2, 35 %); "throughput" (no think time: each tool's own speed) within a factor of 20.
 */
export type CountTolerance = "exact" | "timing" | "throughput";

const nearness = (tolerance: CountTolerance) =>
  tolerance === "exact"
    ? (a: number, b: number) => a === b
    : tolerance === "throughput"
      ? (a: number, b: number) => (a === 0) === (b === 0) && Math.max(a, b) <= 20 * Math.max(1, Math.min(a, b))
      : (a: number, b: number) => Math.abs(a - b) <= Math.max(2, 0.35 * Math.max(a, b));

export function compare(k6: Outcome, edge: Outcome, tolerance: CountTolerance = "timing"): Comparison {
  const near = nearness(tolerance);
  const exit = k6.exit === edge.exit;
  const checksVerdict = k6.checks.verdict === edge.checks.verdict;
  const checkCounts = near(k6.checks.passes, edge.checks.passes) && near(k6.checks.fails, edge.checks.fails);
  const iterations = near(k6.iterations, edge.iterations);
  const thresholds = JSON.stringify(sortedEntries(k6.thresholds)) === JSON.stringify(sortedEntries(edge.thresholds));
  const metrics = k6.metrics.join() === edge.metrics.join();
  const parity = exit && checksVerdict;
  return { exit, checksVerdict, checkCounts, thresholds, metrics, parity, iterations, same: parity && checkCounts && iterations && thresholds && metrics };
}

const sortedEntries = (r: Readonly<Record<string, string>>) => Object.entries(r).sort(([a], [b]) => a.localeCompare(b));

/** What differs, in words, for the table and a failing test's message. */
export function differences(k6: Outcome, edge: Outcome, tolerance: CountTolerance = "timing"): string[] {
  const c = compare(k6, edge, tolerance);
  const out: string[] = [];
  if (!c.exit) out.push(`exit ${edge.exit} (k6: ${k6.exit})`);
  if (!c.checksVerdict || !c.checkCounts) out.push(`checks ${edge.checks.passes}✓/${edge.checks.fails}✗ (k6: ${k6.checks.passes}✓/${k6.checks.fails}✗)`);
  if (!c.iterations) out.push(`iterations ${edge.iterations} (k6: ${k6.iterations})`);
  if (!c.thresholds) out.push(`thresholds ${JSON.stringify(edge.thresholds)} (k6: ${JSON.stringify(k6.thresholds)})`);
  if (!c.metrics) out.push(`metrics [${edge.metrics.join(", ")}] (k6: [${k6.metrics.join(", ")}])`);
  return out;
}

/** One script's run under both tools. */
export interface CorpusResult {
  readonly name: string;
  readonly counts: CountTolerance;
  readonly k6: Outcome;
  readonly edgeload: Outcome;
}

export const compareResult = (r: CorpusResult) => compare(r.k6, r.edgeload, r.counts);
