/**
 * `edgeload compare`: did a run get slower or more error-prone than its baseline?
 *
 *   edgeload compare <baseline-run|baseline-name> <run> [--format table|json]
 *                    [--min-effect 5%] [--min-latency 1ms] [--min-rate 0.1%] [--confidence 95%]
 *                    [--save-baseline NAME] [--url URL --token TOKEN]
 *   edgeload compare <run> --save-baseline NAME        (name a run, e.g. the first baseline)
 *
 * The API does the statistics (core/results/compare.ts); this prints one row per region × metric.
 * With --save-baseline the run becomes the named baseline only when the comparison passed and
 * the run's own verdict did (the API refuses any other run as a baseline, 409), so
 * a pipeline can run `edgeload compare main <new run> --save-baseline main` after every
 * build and never ratchet a regression in (nor a comparison that could not be made). Exit
 * codes: 0 nothing regressed, 99 something did, 75 inconclusive (a region or metric one run
 * has no data for, or nothing to compare), 104 bad input (flags, unknown run or name, run
 * not ended).
 */
import { BASELINE_NAME, parseCompareOptions, type MetricComparison } from "../core/results/compare.ts";
import { table } from "../core/run/text-format.ts";
import { describeVerdict, verdictExitCode } from "../core/run/verdict.ts";
import { formatMs } from "../core/metrics/clock-resolution.ts";
import { ApiProblem, type ComparisonResponse, type EdgeloadClient } from "./client.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { COMPARE_COMMAND } from "./tables/analysis-tables.ts";

const USAGE = "(edgeload compare --help)";

export async function compareCommand(args: string[]): Promise<number> {
  const { values: v, positionals } = parseCommand(COMPARE_COMMAND, args);
  const save = v["save-baseline"];
  const problems: string[] = [];
  if (v.format !== "table" && v.format !== "json") problems.push(`--format: "${v.format}" must be table or json`);
  if (save !== undefined && !BASELINE_NAME.test(save))
    problems.push(`--save-baseline: "${save}" is not a baseline name (1–64 of a-z 0-9 . _ -, starting with a letter or digit, not "r-")`);
  if (positionals.length !== 2 && !(positionals.length === 1 && save !== undefined)) problems.push("a baseline (run id or name) and a run are required");
  // Validated here as well as by the API, so a typo fails before anything is asked.
  const params = { minEffect: v["min-effect"], minLatency: v["min-latency"], minRate: v["min-rate"], confidence: v.confidence };
  const options = parseCompareOptions(params);
  if (!options.ok) problems.push(...options.problems.map((p) => `--${FLAG_OF[p.field] ?? p.field}: ${p.detail}`));
  if (problems.length) throw new CliError(`${problems.join("\n")}\n${USAGE}`, EXIT.invalidConfig);

  const client = await connect(v);
  if (positionals.length === 1) {
    await saveBaseline(client, save!, positionals[0]!);
    return EXIT.ok;
  }
  const [baseline, candidate] = positionals as [string, string];
  const query = Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const result = await badInputOnProblem(() => client.compare(baseline, candidate, query));
  if (v.format === "json") console.log(JSON.stringify(result, null, 2));
  else console.log(renderComparison(result));
  if (save !== undefined) {
    if (result.outcome.kind !== "passed") console.error(`baseline ${save} not moved: ${result.candidate.id} ${describeVerdict(result.outcome)}`);
    else if (result.candidate.status !== "passed")
      console.error(
        `baseline ${save} not moved: ${result.candidate.id} ended ${result.candidate.status} (only a run whose own verdict passed can be a baseline)`,
      );
    else await saveBaseline(client, save, result.candidate.id);
  }
  return verdictExitCode(result.outcome);
}

const FLAG_OF: Record<string, string> = { minEffect: "min-effect", minLatency: "min-latency", minRate: "min-rate", confidence: "confidence" };

async function saveBaseline(client: EdgeloadClient, name: string, runId: string): Promise<void> {
  const saved = await badInputOnProblem(() => client.saveBaseline(name, runId));
  const moved = saved.previousRunId ? ` (was ${saved.previousRunId})` : "";
  console.error(`baseline ${saved.name} → ${saved.runId}${moved}`);
}

/** Unknown runs or names, runs still going and bad parameters are the caller's input: exit 104. */
async function badInputOnProblem<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ApiProblem && [400, 404, 409].includes(error.status)) throw new CliError(error.message, EXIT.invalidConfig);
    throw error;
  }
}

const VERDICT_MARK = { regressed: "✗ regressed", improved: "✓ improved", unchanged: "unchanged", "no-data": "? no data" } as const;

/** The comparison as a table: one row per region × metric, then the verdict and notes. */
function renderComparison(r: ComparisonResponse): string {
  const name = (run: ComparisonResponse["baseline"]) => (run.baseline ? `${run.baseline} (${run.id})` : run.id);
  const o = r.options;
  const rows = r.metrics.map((m) => [
    m.region,
    m.metric,
    value(m, m.baseline, r.clockResolutionMs),
    value(m, m.candidate, r.clockResolutionMs),
    change(m, r.clockResolutionMs),
    m.interval ? `[${signed(m, m.interval[0], r.clockResolutionMs)}, ${signed(m, m.interval[1], r.clockResolutionMs)}]` : "-",
    VERDICT_MARK[m.verdict],
  ]);
  const regressed = r.regions
    .map(({ region }) => [region, r.metrics.filter((m) => m.region === region && m.verdict === "regressed").map((m) => m.metric)] as const)
    .filter(([, metrics]) => metrics.length)
    .map(([region, metrics]) => `${region} (${metrics.join(", ")})`);
  return [
    `  baseline   ${name(r.baseline)}`,
    `  candidate  ${name(r.candidate)}`,
    `  ${Math.round(o.confidence * 100)}% intervals of candidate − baseline; a change counts beyond max(${percent(o.minRelative)}, ${formatMs(o.minLatencyMs)}) of latency, ${percent(o.minRate)} of a rate`,
    "",
    ...table(["region", "metric", "baseline", "candidate", "change", "interval", "verdict"], rows),
    "",
    `  verdict: ${VERDICT_MARK[r.verdict]}${regressed.length ? ` in ${regressed.join(", ")}` : ""}`,
    ...(r.outcome.kind === "inconclusive" ? [`  INCONCLUSIVE (exit ${verdictExitCode(r.outcome)}):`, ...r.outcome.reasons.map((x) => `    - ${x}`)] : []),
    ...r.notes.filter((n) => !(r.outcome.kind === "inconclusive" && r.outcome.reasons.includes(n))).map((n) => `  note: ${n}`),
  ].join("\n");
}

const percent = (ratio: number) => `${+(ratio * 100).toFixed(2)}%`;

/** Latencies to the runs' clock step (`step`, ms; null: unknown), rates as percentages. */
function value(m: MetricComparison, v: number | null, step: number | null = null): string {
  if (v === null) return "-";
  return m.unit === "ms" ? formatMs(v, step) : percent(v);
}

/** A signed difference: ms for latency, percentage points for rates. */
function signed(m: MetricComparison, v: number, step: number | null = null): string {
  if (v === 0) return "0";
  const sign = v > 0 ? "+" : "-";
  return m.unit === "ms" ? `${sign}${formatMs(Math.abs(v), step)}` : `${sign}${+(Math.abs(v) * 100).toFixed(2)}pp`;
}

function change(m: MetricComparison, step: number | null): string {
  if (m.change === null) return "-";
  const relative = m.unit === "ms" && m.relativeChange !== null ? ` (${m.relativeChange >= 0 ? "+" : ""}${(m.relativeChange * 100).toFixed(1)}%)` : "";
  return signed(m, m.change, step) + relative;
}
