/**
 * The Prometheus text exposition format, parsed into samples, and series selectors that
 * pick some of them — what a shard needs to read a target's `/metrics` before, during and
 * after a run (its memory, CPU and request counters next to the load it sent).
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

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly timestampMs?: number;
}

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

/** Sticky patterns of a metric and a label name (also read by series-selector.ts). */
export const METRIC_NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
export const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/** The token of `re` at `at` in `s`, or "" (the regexes are sticky). */
export function tokenAt(re: RegExp, s: string, at: number): string {
  re.lastIndex = at;
  return re.exec(s)?.[0] ?? "";
}

function skipBlanks(s: string, at: number): number {
  while (s[at] === " " || s[at] === "\t") at++;
  return at;
}

function untilBlank(s: string, at: number): number {
  while (at < s.length && s[at] !== " " && s[at] !== "\t") at++;
  return at;
}

/** A float as Go's strconv.ParseFloat reads it (decimal only), or undefined. */
export function parseGoFloat(token: string): number | undefined {
  if (DECIMAL.test(token)) {
    const n = Number(token);
    return Number.isFinite(n) ? n : undefined; // Go rejects 1e400 as out of range
  }
  if (/^nan$/i.test(token)) return NaN;
  const inf = /^([+-]?)inf(?:inity)?$/i.exec(token);
  if (inf) return inf[1] === "-" ? -Infinity : Infinity;
  return undefined;
}

/** A parser step: what was read and where reading goes on, or what was wrong. */
export type Step<T> = { value: T; at: number } | { error: string };

/** `{a="1",b="2"}` starting at the "{"; label values unescaped. */
function readLabels(line: string, at: number): Step<Record<string, string>> {
  const pairs: Array<[string, string]> = [];
  at = skipBlanks(line, at + 1);
  while (line[at] !== "}") {
    const name = tokenAt(LABEL_NAME, line, at);
    if (!name) return { error: `expected a label name or "}" at column ${at + 1}` };
    at = skipBlanks(line, at + name.length);
    if (line[at] !== "=") return { error: `expected "=" after label name "${name}" at column ${at + 1}` };
    at = skipBlanks(line, at + 1);
    if (line[at] !== '"') return { error: `expected '"' to open the value of label "${name}" at column ${at + 1}` };
    let value = "";
    for (at++; line[at] !== '"'; at++) {
      if (at >= line.length) return { error: `the value of label "${name}" is not closed with '"'` };
      if (line[at] !== "\\") {
        value += line[at];
        continue;
      }
      const escaped = line[++at];
      if (escaped === "\\" || escaped === '"') value += escaped;
      else if (escaped === "n") value += "\n";
      else return { error: `invalid escape "\\${escaped ?? ""}" in the value of label "${name}" (use \\\\, \\" or \\n) at column ${at}` };
    }
    if (pairs.some(([n]) => n === name)) return { error: `label "${name}" appears twice` };
    pairs.push([name, value]);
    at = skipBlanks(line, at + 1);
    if (line[at] === ",") at = skipBlanks(line, at + 1);
    else if (line[at] !== "}") return { error: `expected "," or "}" after the value of label "${name}" at column ${at + 1}` };
  }
  // fromEntries defines own properties, so a label named __proto__ stays a label.
  return { value: Object.fromEntries(pairs), at: at + 1 };
}

/** A timestamp token as milliseconds: integer ms in 0.0.4, float seconds in OpenMetrics. */
function readTimestamp(token: string, openMetrics: boolean): number | string {
  if (openMetrics) {
    const s = DECIMAL.test(token) ? Number(token) : NaN;
    return Number.isFinite(s) ? Math.round(s * 1000) : `invalid timestamp "${token}" (OpenMetrics timestamps are seconds)`;
  }
  if (!INTEGER.test(token)) return `invalid timestamp "${token}" (milliseconds, an integer)`;
  const ms = Number(token);
  return Number.isSafeInteger(ms) ? ms : `timestamp "${token}" is out of range`;
}

/** `value [timestamp]` and, in OpenMetrics, `[# exemplar]` (not inside an exemplar), to the end of the line. */
function readValueAndTimestamp(line: string, at: number, openMetrics: boolean, inExemplar = false): Step<{ value: number; timestampMs?: number }> {
  const end = untilBlank(line, at);
  if (end === at) return { error: "missing the sample value" };
  const value = parseGoFloat(line.slice(at, end));
  if (value === undefined) return { error: `invalid value "${line.slice(at, end)}" (a number, NaN, +Inf or -Inf) at column ${at + 1}` };
  at = skipBlanks(line, end);
  let timestampMs: number | undefined;
  if (at < line.length && line[at] !== "#") {
    const tsEnd = untilBlank(line, at);
    const ts = readTimestamp(line.slice(at, tsEnd), openMetrics);
    if (typeof ts === "string") return { error: `${ts} at column ${at + 1}` };
    timestampMs = ts;
    at = skipBlanks(line, tsEnd);
  }
  if (openMetrics && !inExemplar && line[at] === "#") {
    const exemplar = readExemplar(line, skipBlanks(line, at + 1));
    if ("error" in exemplar) return exemplar;
    at = exemplar.at;
  }
  if (at < line.length) return { error: `unexpected "${line.slice(at)}" after the ${timestampMs === undefined ? "value" : "timestamp"} at column ${at + 1}` };
  return { value: timestampMs === undefined ? { value } : { value, timestampMs }, at };
}

/** An OpenMetrics exemplar `{labels} value [timestamp]`: checked, then dropped. */
function readExemplar(line: string, at: number): Step<null> {
  if (line[at] !== "{") return { error: `expected an exemplar's "{" after "#" at column ${at + 1}` };
  const labels = readLabels(line, at);
  if ("error" in labels) return { error: `in the exemplar: ${labels.error}` };
  const rest = readValueAndTimestamp(line, skipBlanks(line, labels.at), true, true);
  if ("error" in rest) return { error: `in the exemplar: ${rest.error}` };
  return { value: null, at: rest.at };
}

function readSample(line: string, openMetrics: boolean): PromSample | string {
  let at = skipBlanks(line, 0);
  const name = tokenAt(METRIC_NAME, line, at);
  if (!name) return `expected a metric name at column ${at + 1}`;
  at += name.length;
  let labels: Record<string, string> = {};
  const afterName = skipBlanks(line, at);
  if (line[afterName] === "{") {
    const read = readLabels(line, afterName);
    if ("error" in read) return read.error;
    labels = read.value;
    at = skipBlanks(line, read.at);
  } else if (afterName === at && at < line.length) {
    return `unexpected "${line[at]}" in metric name "${name}" at column ${at + 1}`;
  } else at = afterName;
  const rest = readValueAndTimestamp(line, at, openMetrics);
  if ("error" in rest) return rest.error;
  return { name, labels, ...rest.value };
}

/** HELP text: `\\` and `\n` are escapes (and `\"` in OpenMetrics); other backslashes are errors. */
function unescapeHelp(text: string, openMetrics: boolean): string | { error: string } {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "\\") {
      out += text[i];
      continue;
    }
    const c = text[++i];
    if (c === "\\") out += "\\";
    else if (c === "n") out += "\n";
    else if (c === '"' && openMetrics) out += '"';
    else return { error: `invalid escape "\\${c ?? ""}" in HELP text (use \\\\ or \\n)` };
  }
  return out;
}

/**
 * Parses an exposition, collecting every malformed line. Pass `openMetrics` when the
 * response's Content-Type says which format it is; otherwise a `# EOF` line decides.
 *
 * @example parsePrometheusText('up{job="api"} 1\n') // → { ok: true, samples: [{ name: "up", labels: { job: "api" }, value: 1 }], … }
 */
export function parsePrometheusText(text: string, options: { openMetrics?: boolean } = {}): PromParse {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const openMetrics = options.openMetrics ?? lines.some((l) => l.trim() === "# EOF");
  const typeNames: readonly string[] = openMetrics ? OPENMETRICS_TYPES : PROMETHEUS_TYPES;
  const problems: PromProblem[] = [];
  const samples: PromSample[] = [];
  const types = new Map<string, PromType>();
  const help = new Map<string, string>();
  const units = new Set<string>();
  const sampleNames = new Set<string>();
  const series = new Set<string>();
  let eofLine = 0;

  /** The family a sample name belongs to under the TYPEs seen so far, with its type. */
  const familyOf = (name: string): [string, PromType | undefined] => {
    const own = types.get(name);
    if (own) return [name, own];
    for (const suffix of ALL_SUFFIXES) {
      const family = name.slice(0, -suffix.length);
      const type = name.endsWith(suffix) ? types.get(family) : undefined;
      if (type && SUFFIXES[type].includes(suffix)) return [family, type];
    }
    return [name, undefined];
  };

  lines.forEach((line, index) => {
    const lineNo = index + 1;
    const report = (detail: string) => problems.push({ line: lineNo, detail });
    const start = skipBlanks(line, 0);
    if (start === line.length) return;
    if (eofLine) return void report(`nothing may follow "# EOF" (line ${eofLine})`);

    if (line[start] === "#") {
      const keywordAt = skipBlanks(line, start + 1);
      const keywordEnd = untilBlank(line, keywordAt);
      const keyword = line.slice(keywordAt, keywordEnd);
      if (openMetrics && keyword === "EOF" && keywordEnd === line.trimEnd().length) return void (eofLine = lineNo);
      if (keyword !== "HELP" && keyword !== "TYPE" && !(openMetrics && keyword === "UNIT")) return; // a comment
      const nameAt = skipBlanks(line, keywordEnd);
      const name = tokenAt(METRIC_NAME, line, nameAt);
      const afterName = nameAt + name.length;
      if (!name || (afterName < line.length && line[afterName] !== " " && line[afterName] !== "\t")) {
        return void report(`expected a metric name after "# ${keyword}" at column ${nameAt + 1}`);
      }
      const rest = line.slice(skipBlanks(line, afterName));
      if (keyword === "HELP") {
        if (help.has(name)) return void report(`second HELP line for "${name}"`);
        const docstring = unescapeHelp(rest, openMetrics);
        if (typeof docstring !== "string") return void report(docstring.error);
        help.set(name, docstring);
      } else if (keyword === "UNIT") {
        if (units.has(name)) return void report(`second UNIT line for "${name}"`);
        units.add(name);
      } else {
        const type = rest.trimEnd();
        if (!typeNames.includes(type)) return void report(`unknown type "${type}" for "${name}" (use ${typeNames.join(", ")})`);
        if (types.has(name)) return void report(`second TYPE line for "${name}"`);
        const early = [name, ...SUFFIXES[type as PromType].map((s) => name + s)].find((n) => sampleNames.has(n));
        if (early) return void report(`TYPE line for "${name}" comes after its sample "${early}"; it must come first`);
        types.set(name, type as PromType);
      }
      return;
    }

    const sample = readSample(line, openMetrics);
    if (typeof sample === "string") return void report(sample);
    const [family, type] = familyOf(sample.name);
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
    if (badBound) return void report(badBound);
    const key = seriesKey(sample);
    if (series.has(key)) return void report(`series ${key} appears twice`);
    series.add(key);
    sampleNames.add(sample.name);
    samples.push(sample);
  });

  if (problems.length) return { ok: false, problems };
  return { ok: true, samples, types: Object.fromEntries(types), help: Object.fromEntries(help), format: openMetrics ? "openmetrics" : "prometheus" };
}

/** `name{a="1",b="2"}` with labels sorted: one string per series. */
export function seriesKey(sample: Pick<PromSample, "name" | "labels">): string {
  const labels = Object.keys(sample.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(sample.labels[k])}`);
  return labels.length ? `${sample.name}{${labels.join(",")}}` : sample.name;
}
