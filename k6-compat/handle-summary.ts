/**
 * k6's `handleSummary(data)` for a script run on edgeload: the run's summary (already in
 * k6's summary-export shape, core/run/summary.ts) turned into the `data` k6 hands the hook, the
 * hook run in Node once the run has ended (it may format, but not send), and its outputs
 * written as k6 writes them: `stdout`, `stderr`, or a file path per key.
 *
 * In `data`: each metric's `type`, `contains` and `values` (trends: avg, min, med, max and
 * the percentiles; counters: count, rate; rates: rate, passes, fails) and `thresholds`
 * ({expression: {ok}}); `state.testRunDurationMs`; `setup_data` is left out, as it may
 * hold credentials. `root_group` holds each check's passes and fails in its group, nested as k6
 * 1.x hands them (arrays of groups and checks, each with the md5 of its path as its id).
 */
import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import type { GroupNode } from "../core/metrics/check-results.ts";
import { METRIC_KINDS } from "../core/metrics/thresholds.ts";

type Exported = Record<string, unknown> & { metrics?: Record<string, Record<string, unknown>> };

/** Metrics of bytes (k6's `contains: "data"`): the protocol's and k6/browser's pages' (metrics.Data in k6). */
const DATA_METRICS = new Set(["data_received", "data_sent", "browser_data_received", "browser_data_sent"]);
/** Built-in trends of times outside METRIC_KINDS (no threshold reads them). */
const TIME_TRENDS = new Set(["iteration_duration", "group_duration"]);

export function handleSummaryData(summary: Exported, timeTrends: ReadonlySet<string>): Record<string, unknown> {
  const metrics: Record<string, unknown> = {};
  for (const [key, m] of Object.entries(summary.metrics ?? {})) {
    const base = key.replace(/\{.*$/, "");
    const { thresholds, type: declaredType, ...rest } = m as { thresholds?: Record<string, boolean>; type?: string } & Record<string, unknown>;
    const type =
      declaredType ??
      (METRIC_KINDS as Record<string, string>)[base] ??
      ("avg" in rest ? "trend" : "passes" in rest ? "rate" : "min" in rest ? "gauge" : "counter");
    const values: Record<string, unknown> = type === "rate" ? { rate: rest.value, passes: rest.passes, fails: rest.fails } : rest;
    const builtInTrend = (Object.hasOwn(METRIC_KINDS, base) || TIME_TRENDS.has(base)) && type === "trend";
    metrics[key] = {
      type,
      contains: DATA_METRICS.has(base) ? "data" : builtInTrend || timeTrends.has(base) ? "time" : "default",
      values,
      ...(thresholds ? { thresholds: Object.fromEntries(Object.entries(thresholds).map(([expr, failed]) => [expr, { ok: !failed }])) } : {}),
    };
  }
  const root = summary.root_group as GroupNode | undefined;
  return { root_group: root ? handedGroup(root) : root, options: summary.options, state: summary.state, metrics };
}

/** A group as k6 1.x hands it to handleSummary: its groups and checks as arrays, ids the md5 of their paths. */
function handedGroup(group: GroupNode): Record<string, unknown> {
  const id = (path: string) => createHash("md5").update(path).digest("hex");
  return {
    name: group.name,
    path: group.path,
    id: id(group.path),
    groups: Object.values(group.groups ?? {}).map(handedGroup),
    checks: Object.values(group.checks ?? {}).map((c) => ({ name: c.name, path: c.path, id: id(c.path), passes: c.passes, fails: c.fails })),
  };
}

/**
 * Writes what handleSummary returned: `stdout`, `stderr`, else a file per key. A file that
 * cannot be written (a folder that does not exist) is logged and the others still written,
 * as k6 does: the run's exit code stays its thresholds'.
 */
export async function writeSummaryOutputs(
  outputs: unknown,
  log: (line: string) => void = console.log,
  warn: (line: string) => void = console.error,
): Promise<void> {
  if (outputs === undefined || outputs === null) return;
  if (typeof outputs !== "object") throw new Error('handleSummary must return an object of outputs, e.g. { stdout: …, "summary.json": … }');
  for (const [key, value] of Object.entries(outputs)) {
    const content = typeof value === "string" ? value : value instanceof ArrayBuffer ? new Uint8Array(value) : JSON.stringify(value);
    if (key === "stdout") process.stdout.write(content);
    else if (key === "stderr") process.stderr.write(content);
    else {
      try {
        await writeFile(key, content);
        log(`handleSummary wrote ${key}`);
      } catch (error) {
        warn(`ERRO failed to write the handleSummary output ${key}: ${(error as Error).message}`);
      }
    }
  }
}
