/**
 * Series selectors: PromQL's instant-vector selector without offsets or ranges, to pick
 * the samples a scrape step keeps out of a parsed exposition (prometheus-text-parser.ts).
 *
 *   selector = metric_name [ "{" [ matcher { "," matcher } [ "," ] ] "}" ]
 *            | "{" matcher { "," matcher } [ "," ] "}"
 *   matcher  = label_name ( "=" | "!=" | "=~" | "!~" ) string
 *   string   = "…" or '…' (escapes \\ \" \' \n \r \t \xHH \uHHHH) | `…` (raw)
 *
 * As in Prometheus, regexes match the whole value (`^(?s:re)$`), a missing label reads as
 * "", `__name__` is the metric name, and a selector must have a matcher that does not match
 * "" (so `{code=~".*"}` alone is refused). A leading `(?i)` makes a regex case-insensitive.
 * Regexes run as JavaScript (`u` flag), which accepts a superset of RE2 except POSIX classes.
 */
import { LABEL_NAME, METRIC_NAME, type PromSample, type Step, tokenAt } from "./prometheus-text-parser.ts";

export type MatchOp = "=" | "!=" | "=~" | "!~";

export interface LabelMatcher {
  /** A label name, or `__name__` for the metric name. */
  readonly label: string;
  readonly op: MatchOp;
  /** The string as unquoted: a literal for = and !=, a regex source for =~ and !~. */
  readonly value: string;
}

/** A parsed selector: plain data, so it can travel in a protocol message. */
export interface SeriesSelector {
  readonly text: string;
  readonly matchers: readonly LabelMatcher[];
}

export interface SelectorError {
  readonly reason: "syntax" | "regex" | "matches-everything";
  readonly detail: string;
}

export type SelectorParse = { ok: true; selector: SeriesSelector } | { ok: false; error: SelectorError };

const OPS: readonly MatchOp[] = ["=~", "!~", "!=", "="];
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { "\\": "\\", '"': '"', "'": "'", n: "\n", r: "\r", t: "\t" };

function skipSpace(s: string, at: number): number {
  while (at < s.length && /\s/.test(s[at]!)) at++;
  return at;
}

/** A PromQL string literal starting at its quote. */
function readString(s: string, at: number): Step<string> {
  const quote = s[at];
  if (quote !== '"' && quote !== "'" && quote !== "`") return { error: `expected a quoted string at column ${at + 1}` };
  const opened = at;
  let out = "";
  for (at++; s[at] !== quote; at++) {
    if (at >= s.length) return { error: `the string opened with ${quote} at column ${opened + 1} is not closed` };
    if (s[at] !== "\\" || quote === "`") {
      out += s[at];
      continue;
    }
    const c = s[++at] ?? "";
    const simple = SIMPLE_ESCAPES[c];
    const hexLength = c === "x" ? 2 : c === "u" ? 4 : 0;
    const hex = s.slice(at + 1, at + 1 + hexLength);
    if (simple !== undefined) out += simple;
    else if (hexLength && /^[0-9a-fA-F]+$/.test(hex) && hex.length === hexLength) {
      out += String.fromCharCode(parseInt(hex, 16));
      at += hexLength;
    } else {
      return { error: `invalid escape "\\${c}" at column ${at}: in a quoted regex write a backslash twice ("5\\\\d\\\\d") or use backticks (\`5\\d\\d\`)` };
    }
  }
  return { value: out, at: at + 1 };
}

/** The regex a =~ or !~ matcher runs, anchored at both ends, or why it cannot. */
function compileRegex(source: string): RegExp | string {
  const leadingFlags = /^\(\?([a-zA-Z]+)\)/.exec(source);
  if (leadingFlags && !/^[is]+$/.test(leadingFlags[1]!)) return `flags (?${leadingFlags[1]}) are not supported; (?i) is`;
  const flags = leadingFlags?.[1]?.includes("i") ? "sui" : "su";
  const body = leadingFlags ? source.slice(leadingFlags[0].length) : source;
  try {
    new RegExp(body, flags); // alone first, so that "a)|(b" cannot escape the anchors below
    return new RegExp(`^(?:${body})$`, flags);
  } catch (e) {
    return (e as Error).message;
  }
}

function labelValue(sample: PromSample, label: string): string {
  if (label === "__name__") return sample.name;
  return Object.hasOwn(sample.labels, label) ? sample.labels[label]! : "";
}

function matcherTest(m: LabelMatcher): (value: string) => boolean {
  if (m.op === "=") return (v) => v === m.value;
  if (m.op === "!=") return (v) => v !== m.value;
  const re = compileRegex(m.value);
  if (typeof re === "string") throw new SyntaxError(`invalid regex in ${m.label}${m.op}${JSON.stringify(m.value)}: ${re}`);
  return m.op === "=~" ? (v) => re.test(v) : (v) => !re.test(v);
}

/**
 * Parses a series selector.
 *
 * @example parseSeriesSelector('http_requests_total{code=~"5.."}')
 *   // → { ok: true, selector: { matchers: [{ label: "__name__", op: "=", value: "http_requests_total" }, { label: "code", op: "=~", value: "5.." }], … } }
 */
export function parseSeriesSelector(text: string): SelectorParse {
  const fail = (reason: SelectorError["reason"], detail: string): SelectorParse => ({ ok: false, error: { reason, detail } });
  const matchers: LabelMatcher[] = [];
  let at = skipSpace(text, 0);
  const name = tokenAt(METRIC_NAME, text, at);
  if (name) {
    matchers.push({ label: "__name__", op: "=", value: name });
    at = skipSpace(text, at + name.length);
  }
  if (text[at] === "{") {
    const opened = at;
    at = skipSpace(text, at + 1);
    const unclosed = () => fail("syntax", `the "{" at column ${opened + 1} is not closed with "}"`);
    while (text[at] !== "}") {
      if (at >= text.length) return unclosed();
      const label = tokenAt(LABEL_NAME, text, at);
      if (!label) return fail("syntax", `expected a label name at column ${at + 1}`);
      at = skipSpace(text, at + label.length);
      const op = OPS.find((o) => text.startsWith(o, at));
      if (!op) return fail("syntax", `expected =, !=, =~ or !~ after "${label}" at column ${at + 1}`);
      const value = readString(text, skipSpace(text, at + op.length));
      if ("error" in value) return fail("syntax", value.error);
      if (label === "__name__" && name) return fail("syntax", `the metric name is given twice: "${name}" and ${label}${op}…`);
      if (op === "=~" || op === "!~") {
        const re = compileRegex(value.value);
        if (typeof re === "string") return fail("regex", `invalid regex ${JSON.stringify(value.value)} for "${label}": ${re}`);
      }
      matchers.push({ label, op, value: value.value });
      at = skipSpace(text, value.at);
      if (text[at] === ",") at = skipSpace(text, at + 1);
      else if (at >= text.length) return unclosed();
      else if (text[at] !== "}") return fail("syntax", `expected "," or "}" after the matcher on "${label}" at column ${at + 1}`);
    }
    at = skipSpace(text, at + 1);
  } else if (!name) {
    return fail("syntax", `expected a metric name or "{" at column ${at + 1}`);
  }
  if (at < text.length) return fail("syntax", `unexpected "${text.slice(at)}" at column ${at + 1}`);
  if (matchers.every((m) => matcherTest(m)(""))) {
    return fail("matches-everything", 'a selector needs a metric name or a matcher that does not match the empty string, e.g. {job="api"}');
  }
  return { ok: true, selector: { text, matchers } };
}

/**
 * The samples a selector matches, in their order. Throws SyntaxError only for a selector
 * built by hand with a regex parseSeriesSelector would have refused.
 */
export function selectSamples(samples: readonly PromSample[], selector: SeriesSelector): PromSample[] {
  const tests = selector.matchers.map((m) => [m.label, matcherTest(m)] as const);
  return samples.filter((s) => tests.every(([label, test]) => test(labelValue(s, label))));
}
