/**
 * The pieces the end-of-test summary's text and the CLI's listings are made of: k6's dotted
 * metric lines, its figures (bytes, percentages, a trend's stats) and padded tables.
 */
import { formatMs } from "../metrics/clock-resolution.ts";
import type { CustomMetricSummary, TrendSummary } from "./summary-figures.ts";

export const TREND_ORDER = ["avg", "min", "med", "max", "p(90)", "p(95)", "p(99)"] as const;

export function formatBytes(n: number): string {
  const units = ["B", "kB", "MB", "GB"];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(v >= 100 || i === 0 ? 0 : 1)} ${units[i]}`;
}

export function pct(rate: number): string {
  return `${(rate * 100).toFixed(2)}%`;
}

/**
 * A trend's figures in the order the summary's summaryTrendStats lists them (k6's by
 * default); `count` is a count, the rest are times.
 */
export function trendLine(t: TrendSummary, resolutionMs?: number | null, stats: readonly string[] = TREND_ORDER, unitless = false): string {
  const values = t as unknown as Readonly<Record<string, number | undefined>>;
  return stats
    .filter((k) => values[k] !== undefined)
    .map((k) => (k === "count" || unitless ? `${k}=${values[k]}` : `${k}=${formatMs(values[k]!, resolutionMs)}`))
    .join(" ");
}

export function dotted(name: string, value: string, width = 32): string {
  return `  ${name}${".".repeat(Math.max(3, width - name.length))}: ${value}`;
}

/** Rows under a header, columns padded; figures right-aligned after the first column unless `allLeft`. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], allLeft = false): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    "  " +
    cells
      .map((c, i) => (i === 0 || allLeft ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** A custom metric's figures on its summary line: a counter's count and rate, a rate's share and passes, a trend's stats. */
export function customValue(metric: CustomMetricSummary, resolutionMs?: number | null, stats: readonly string[] = TREND_ORDER, unitless = false): string {
  return metric.type === "counter"
    ? `${metric.count} ${metric.rate.toFixed(2)}/s`
    : metric.type === "rate"
      ? `${pct(metric.value)} ✓ ${metric.passes} ✗ ${metric.fails}`
      : trendLine(metric, resolutionMs, stats, unitless);
}
