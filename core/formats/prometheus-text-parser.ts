/**
 * The Prometheus text exposition format, parsed into samples, which series selectors
 * (series-selector.ts) pick from — what a shard needs to read a target's `/metrics` before,
 * during and after a run (its memory, CPU and request counters next to the load it sent).
 * This module holds the rules across lines; prometheus-text-line.ts reads each line's tokens.
 *
 * Grammar (text format 0.0.4, https://prometheus.io/docs/instrumenting/exposition_formats/),
 * one item per line, tokens separated by blanks and tabs:
 *
 *   sample  = metric_name [ "{" [ label { "," label } [ "," ] ] "}" ] value [ timestamp ]
 *   label   = label_name "=" '"' label_value '"'      label_value escapes: \\  \"  \n
 *   value   = Go float: 1, -2.5e-3, .5, NaN, +Inf, -Inf (also Inf, inf, Infinity)
 *   comment = "# HELP" metric_name docstring         docstring escapes: \\  \n
 *           | "# TYPE" metric_name ("counter" | "gauge" | "histogram" | "summary" | "untyped")
 *           | "#" anything else (ignored); blank lines are ignored
 *
 * metric_name is `[a-zA-Z_:][a-zA-Z0-9_:]*`, label_name `[a-zA-Z_][a-zA-Z0-9_]*`, a
 * timestamp is integer milliseconds. Rules of the format that are checked too: one HELP and
 * one TYPE per name, TYPE before the name's samples, no label twice on a sample, no series
 * twice, `le` on histogram buckets and `quantile` on summary samples as numbers.
 *
 * OpenMetrics 1.0 (https://prometheus.io/docs/specs/om/open_metrics_spec/) is recognised by
 * its closing `# EOF` line, or asked for with `{ openMetrics: true }`: then timestamps are
 * seconds (converted to `timestampMs`), exemplars (`… # {trace_id="x"} 1`) are checked and
 * dropped, `# UNIT` lines are read, the types are OpenMetrics' (`unknown`, `gaugehistogram`,
 * `stateset`, `info` …) and nothing may follow `# EOF`. Not supported: Prometheus 3's quoted
 * UTF-8 names (`{"my.metric"}`) and hexadecimal floats.
 *
 * Why written here rather than taken from npm (checked 2026-11): `parse-prometheus-text-format`
 * 1.1.1 (the only parser with real use) keeps values as strings, stops at the first bad line
 * with no line number, accepts lines it should not, and folds histogram buckets of different
 * label sets into one object; its build (Rollup 1, Babel 7.5, a dependency for one shallow
 * compare) has had no release since. `prom2javascript` 0.2.0 (its only release) needs Node's
 * `readline`, so not workerd, and rejects NaN and -Inf. `@platformatic/promotel` 0.2.2
 * parses into remote-write protobufs, pulls in protobufjs, undici and prom-client, and skips
 * bad lines silently. `@prometheus-io/*` on npm is PromQL (CodeMirror, Lezer), not the
 * exposition format. The grammar is small enough to parse strictly here, with line numbers.
 *
 * @example
 *   const parsed = parsePrometheusText(await (await fetch(metricsUrl)).text());
 *   const rss = parseSeriesSelector("process_resident_memory_bytes");
 *   if (parsed.ok && rss.ok) selectSamples(parsed.samples, rss.selector)[0]?.value;
 */
import { METRIC_NAME, parseGoFloat, readSample, skipBlanks, tokenAt, unescapeHelp, untilBlank, type PromSample } from "./prometheus-text-line.ts";

// Read here by series-selector.ts and the writer's tests.
export { LABEL_NAME, METRIC_NAME, parseGoFloat, type PromSample, type Step, tokenAt } from "./prometheus-text-line.ts";

export const PROMETHEUS_TYPES = ["counter", "gauge", "histogram", "summary", "untyped"] as const;
export const OPENMETRICS_TYPES = ["counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary", "unknown"] as const;
export type PromType = (typeof PROMETHEUS_TYPES)[number] | (typeof OPENMETRICS_TYPES)[number];

/** A malformed line: its 1-based number and what is wrong (with the column where it helps). */
export interface PromProblem {
  readonly line: number;
  readonly detail: string;
}

export type PromParse =
  | {
      ok: true;
      samples: PromSample[];
      /** TYPE per metric family name, e.g. `{ http_request_duration_seconds: "histogram" }`. */
      types: Record<string, PromType>;
      /** HELP per metric family name, unescaped. */
      help: Record<string, string>;
      format: "prometheus" | "openmetrics";
    }
  | { ok: false; problems: PromProblem[] };

/** Sample-name suffixes that belong to a family of each type: `foo_bucket` is of histogram `foo`. */
const SUFFIXES: Readonly<Record<PromType, readonly string[]>> = {
  counter: ["_total", "_created"],
  gauge: [],
  histogram: ["_bucket", "_sum", "_count", "_created"],
  gaugehistogram: ["_bucket", "_gsum", "_gcount"],
  summary: ["_sum", "_count", "_created"],
  stateset: [],
  info: ["_info"],
  untyped: [],
  unknown: [],
};

const ALL_SUFFIXES = [...new Set(Object.values(SUFFIXES).flat())];

/**
 * Parses an exposition, collecting every malformed line. Pass `openMetrics` when the
 * response's Content-Type says which format it is; otherwise a `# EOF` line decides.
 *
 * @example parsePrometheusText('up{job="api"} 1\n') // → { ok: true, samples: [{ name: "up", labels: { job: "api" }, value: 1 }], … }
 */
export function parsePrometheusText(text: string, options: { openMetrics?: boolean } = {}): PromParse {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const openMetrics = options.openMetrics ?? lines.some((l) => l.trim() === "# EOF");
  const seen: Exposition = { openMetrics, samples: [], types: new Map(), help: new Map(), units: new Set(), sampleNames: new Set(), series: new Set() };
  const problems: PromProblem[] = [];
  let eofLine = 0;

  lines.forEach((line, index) => {
    const lineNo = index + 1;
    const report = (detail: string) => problems.push({ line: lineNo, detail });
    const start = skipBlanks(line, 0);
    if (start === line.length) return;
    if (eofLine) return void report(`nothing may follow "# EOF" (line ${eofLine})`);
    if (line[start] !== "#") {
      const problem = takeSample(line, seen);
      if (problem) report(problem);
      return;
    }
    const keywordAt = skipBlanks(line, start + 1);
    const keywordEnd = untilBlank(line, keywordAt);
    const keyword = line.slice(keywordAt, keywordEnd);
    if (openMetrics && keyword === "EOF" && keywordEnd === line.trimEnd().length) return void (eofLine = lineNo);
    if (keyword !== "HELP" && keyword !== "TYPE" && !(openMetrics && keyword === "UNIT")) return; // a comment
    const problem = takeDescriptor(line, keyword, keywordEnd, seen);
    if (problem) report(problem);
  });

  if (problems.length) return { ok: false, problems };
  return {
    ok: true,
    samples: seen.samples,
    types: Object.fromEntries(seen.types),
    help: Object.fromEntries(seen.help),
    format: openMetrics ? "openmetrics" : "prometheus",
  };
}

/** What the lines read so far declared and sent: the rules of the format check each next line against it. */
interface Exposition {
  readonly openMetrics: boolean;
  readonly samples: PromSample[];
  readonly types: Map<string, PromType>;
  readonly help: Map<string, string>;
  readonly units: Set<string>;
  /** Names of the samples so far, which a TYPE line must precede. */
  readonly sampleNames: Set<string>;
  /** seriesKey of each sample so far: a series appears once. */
  readonly series: Set<string>;
}

/** A `# HELP`, `# TYPE` or `# UNIT` line from its keyword's end, taken into `seen`; what is wrong with it, if anything. */
function takeDescriptor(line: string, keyword: string, keywordEnd: number, seen: Exposition): string | undefined {
  const nameAt = skipBlanks(line, keywordEnd);
  const name = tokenAt(METRIC_NAME, line, nameAt);
  const afterName = nameAt + name.length;
  if (!name || (afterName < line.length && line[afterName] !== " " && line[afterName] !== "\t")) {
    return `expected a metric name after "# ${keyword}" at column ${nameAt + 1}`;
  }
  const rest = line.slice(skipBlanks(line, afterName));
  if (keyword === "HELP") {
    if (seen.help.has(name)) return `second HELP line for "${name}"`;
    const docstring = unescapeHelp(rest, seen.openMetrics);
    if (typeof docstring !== "string") return docstring.error;
    seen.help.set(name, docstring);
  } else if (keyword === "UNIT") {
    if (seen.units.has(name)) return `second UNIT line for "${name}"`;
    seen.units.add(name);
  } else {
    const typeNames: readonly string[] = seen.openMetrics ? OPENMETRICS_TYPES : PROMETHEUS_TYPES;
    const type = rest.trimEnd();
    if (!typeNames.includes(type)) return `unknown type "${type}" for "${name}" (use ${typeNames.join(", ")})`;
    if (seen.types.has(name)) return `second TYPE line for "${name}"`;
    const early = [name, ...SUFFIXES[type as PromType].map((s) => name + s)].find((n) => seen.sampleNames.has(n));
    if (early) return `TYPE line for "${name}" comes after its sample "${early}"; it must come first`;
    seen.types.set(name, type as PromType);
  }
  return undefined;
}

/**
 * A sample line, checked against its family's type (a histogram bucket's `le`, a summary
 * quantile's `quantile`) and the series before it, then taken into `seen`; what is wrong
 * with it, if anything.
 */
function takeSample(line: string, seen: Exposition): string | undefined {
  const sample = readSample(line, seen.openMetrics);
  if (typeof sample === "string") return sample;
  const [family, type] = familyOf(sample.name, seen.types);
  const bound = (label: string) => {
    const v = Object.hasOwn(sample.labels, label) ? sample.labels[label] : undefined;
    if (v === undefined) return `${type} sample "${sample.name}" needs a "${label}" label`;
    return parseGoFloat(v) === undefined ? `"${label}" value "${v}" of "${sample.name}" is not a number` : undefined;
  };
  const badBound =
    (type === "histogram" || type === "gaugehistogram") && sample.name === `${family}_bucket`
      ? bound("le")
      : type === "summary" && sample.name === family
        ? bound("quantile")
        : undefined;
  if (badBound) return badBound;
  const key = seriesKey(sample);
  if (seen.series.has(key)) return `series ${key} appears twice`;
  seen.series.add(key);
  seen.sampleNames.add(sample.name);
  seen.samples.push(sample);
  return undefined;
}

/** The family a sample name belongs to under the TYPEs seen so far, with its type. */
function familyOf(name: string, types: ReadonlyMap<string, PromType>): [string, PromType | undefined] {
  const own = types.get(name);
  if (own) return [name, own];
  for (const suffix of ALL_SUFFIXES) {
    const family = name.slice(0, -suffix.length);
    const type = name.endsWith(suffix) ? types.get(family) : undefined;
    if (type && SUFFIXES[type].includes(suffix)) return [family, type];
  }
  return [name, undefined];
}

/** `name{a="1",b="2"}` with labels sorted: one string per series. */
export function seriesKey(sample: Pick<PromSample, "name" | "labels">): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(sample.labels[k])}`);
  return labels.length ? `${sample.name}{${labels.join(",")}}` : sample.name;
}
