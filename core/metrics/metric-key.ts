/**
 * A threshold's metric key, `metric` or `metric{key:value,…}`, read as k6 v1.8 reads it: the
 * shape checks of k6's `metrics.ParseMetricName` (one pair of braces, closing last; every
 * tag has a non-empty text after its first `:`), then the tag list as its
 * `Metric.AddSubmetric` builds it (pairs split on `,`, key and value trimmed of spaces and
 * then of `"` and `'` quotes; a value may itself hold `:`, as in `group:::login`).
 * Apart from thresholds.ts because the summary, the spec and the shard's sub-metric
 * filters read keys too.
 *
 * @example
 * parseMetricKey("http_req_duration{name:'home', group:::login}")
 * // → { ok: true, value: { metric: "http_req_duration", tags: [["name", "home"], ["group", "::login"]] } }
 */

/** A metric name as k6 accepts it: letters, digits and `_`, not starting with a digit. */
const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export interface MetricKey {
  readonly metric: string;
  /** The filter's pairs in the order written (k6 matches them all, in any order). */
  readonly tags: ReadonlyArray<readonly [key: string, value: string]>;
}

export type MetricKeyResult = { ok: true; value: MetricKey } | { ok: false; error: string };

/** Parses a metric key by k6's rules; the error says what k6 would refuse and why. */
export function parseMetricKey(key: string): MetricKeyResult {
  const open = key.indexOf("{");
  const close = key.lastIndexOf("}");
  if (open === -1 && close === -1) return nameOnly(key, []);
  if (open === -1 || close === -1) return { ok: false, error: `metric "${key}" has an unmatched opening or closing curly brace` };
  if (close < open) return { ok: false, error: `metric "${key}" has its closing curly brace before its opening one` };
  if (close !== key.length - 1) return { ok: false, error: `metric "${key}" does not end with its closing curly brace` };
  const tags: Array<readonly [string, string]> = [];
  for (const pair of key.slice(open + 1, close).split(",")) {
    const colon = pair.indexOf(":");
    // k6: `strings.Cut(t, ":")` must leave a non-empty value, so `{}` and `{name}` are refused.
    if (colon === -1 || colon === pair.length - 1) return { ok: false, error: `tag filter "${pair}" of "${key}" is malformed: write key:value` };
    tags.push([unquote(pair.slice(0, colon)), unquote(pair.slice(colon + 1))]);
  }
  return nameOnly(key.slice(0, open), tags);
}

function nameOnly(metric: string, tags: ReadonlyArray<readonly [string, string]>): MetricKeyResult {
  if (!METRIC_NAME.test(metric)) return { ok: false, error: `"${metric}" is not a metric name (letters, digits and _, not starting with a digit)` };
  return { ok: true, value: { metric, tags } };
}

const unquote = (text: string) => text.trim().replace(/^["']+|["']+$/g, "");

/**
 * The name a sub-metric is recorded and shown under: `metric{k:v,k2:v2}` with the pairs as
 * parsed (k6 names it after the key as written; trimming and unquoting make two spellings of
 * one filter one sub-metric).
 */
export function subMetricName(metric: string, tags: ReadonlyArray<readonly [string, string]>): string {
  return `${metric}{${tags.map(([k, v]) => `${k}:${v}`).join(",")}}`;
}
