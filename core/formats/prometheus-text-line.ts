/**
 * One line of the Prometheus text exposition format (and OpenMetrics) read token by token:
 * a sample's name, labels, value, timestamp and exemplar, and a HELP line's escapes, each
 * with the column of what is wrong. The grammar, and the rules that hold across lines
 * (TYPE before samples, no series twice …), are prometheus-text-parser.ts's; this module
 * knows no more than the line it is given.
 */

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

/** Where the blanks (spaces, tabs) from `at` end. */
export function skipBlanks(s: string, at: number): number {
  while (s[at] === " " || s[at] === "\t") at++;
  return at;
}

/** Where the token at `at` ends: the next blank, or the end of the line. */
export function untilBlank(s: string, at: number): number {
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

/** A sample line: `name[{labels}] value [timestamp]` (and an OpenMetrics exemplar), or what is wrong with it. */
/** One sample of an exposition: a series and its value (and timestamp, when the line gives one). */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly timestampMs?: number;
}

export function readSample(line: string, openMetrics: boolean): PromSample | string {
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
export function unescapeHelp(text: string, openMetrics: boolean): string | { error: string } {
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
