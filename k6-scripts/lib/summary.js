/**
 * handleSummary for every edgeload k6 script: k6's summary data as JSON (SUMMARY_PATH,
 * default summary.json — the file `edgeload crosscheck <run> --k6 summary.json` imports)
 * and a short text summary on stdout: the load's figures, each step, custom metrics and
 * thresholds. setup()'s return value (the seed set: credentials) is never written out.
 */

/** @typedef {{ type: string, contains?: string, values: Record<string, number>, thresholds?: Record<string, { ok: boolean }> }} MetricData */
/**
 * k6's summary data: the classic `data` object, or (with --new-machine-readable-summary)
 * the versioned machine-readable one, whose metrics are a list.
 * @typedef {{ metrics?: Record<string, MetricData>, state?: { testRunDurationMs?: number }, setup_data?: unknown,
 *   config?: { duration?: number }, results?: { metrics?: Array<MetricData & { name: string }> } }} SummaryData
 */

/**
 * The metrics by name in the classic shape, from either form (the machine-readable one
 * names trend stats p90 and counts rates as matches of total).
 * @param {SummaryData} data
 * @returns {Record<string, MetricData>}
 */
function metricsOf(data) {
  if (data.metrics) return data.metrics;
  /** @type {Record<string, MetricData>} */
  const out = {};
  for (const m of data.results?.metrics ?? []) {
    /** @type {Record<string, number>} */
    const values = {};
    for (const [k, v] of Object.entries(m.values)) values[/^p\d/.test(k) ? `p(${k.slice(1)})` : k] = v;
    if (m.type === "rate") Object.assign(values, { passes: m.values.matches ?? 0, fails: (m.values.total ?? 0) - (m.values.matches ?? 0) });
    out[m.name] = { ...m, values };
  }
  return out;
}

/**
 * @param {number | undefined} ms
 */
const millis = (ms) => (ms === undefined ? "-" : ms < 10 ? `${ms.toFixed(2)}ms` : `${ms.toFixed(1)}ms`);

/**
 * One metric's figures in a line.
 * @param {MetricData} m
 */
function figures(m) {
  const v = m.values;
  if (m.type === "trend") {
    const stat = (/** @type {string} */ k) => (m.contains === "time" ? millis(v[k]) : String(v[k] ?? "-"));
    return `p50 ${stat("med")}  p90 ${stat("p(90)")}  p95 ${stat("p(95)")}  p99 ${stat("p(99)")}  max ${stat("max")}`;
  }
  if (m.type === "rate") return `${(100 * (v.rate ?? 0)).toFixed(2)}%  (${v.passes ?? 0} of ${(v.passes ?? 0) + (v.fails ?? 0)})`;
  if (m.type === "counter") return `${v.count ?? 0}${v.rate === undefined ? "" : `  (${v.rate.toFixed(2)}/s)`}`;
  return `${v.value ?? "-"}`;
}

/** Built-in metrics k6 reports that the text summary leaves to the JSON. */
const QUIET = /^(http_req_(blocked|connecting|tls_handshaking|sending|receiving)|data_sent|vus|vus_max|iteration_duration)$/;

/**
 * A compact text summary.
 * @param {SummaryData} data
 */
export function textSummary(data) {
  const lines = [];
  const metrics = metricsOf(data);
  const durationS = data.state?.testRunDurationMs !== undefined ? data.state.testRunDurationMs / 1000 : (data.config?.duration ?? 0);
  const names = Object.keys(metrics).sort();
  lines.push(`k6 run of ${durationS.toFixed(1)} s`);
  for (const name of names) {
    const metric = /** @type {MetricData} */ (metrics[name]);
    if (QUIET.test(name) || name.includes("{expected_response")) continue;
    lines.push(`  ${name.padEnd(44)} ${figures(metric)}`);
  }
  const thresholds = names.flatMap((name) => Object.entries(metrics[name]?.thresholds ?? {}).map(([source, t]) => `  ${t.ok ? "✓" : "✗"} ${name}: ${source}`));
  if (thresholds.length) lines.push("thresholds:", ...thresholds);
  return lines.join("\n") + "\n";
}

/**
 * k6's handleSummary hook, exported by every script.
 * @param {SummaryData} data
 */
export function handleSummary(data) {
  // A plain copy: the machine-readable form arrives as a host object that spreads as empty.
  /** @type {SummaryData} */
  const plain = JSON.parse(JSON.stringify(data));
  delete plain.setup_data;
  return { stdout: textSummary(plain), [__ENV.SUMMARY_PATH || "summary.json"]: JSON.stringify(plain, null, 2) + "\n" };
}
