/**
 * The index of local reports (reports/INDEX.md, written by `edgeload report`): one table
 * row per report folder with its headline figures, newest first. A report made again under
 * the same name replaces its row.
 *
 * The figures come from the report's whole-run query row, like the report's own tables.
 */
import { num, pct } from "./report.ts";
import type { ReportInput } from "./report-input.ts";

export interface IndexEntry {
  /** The report's folder, relative to the index. */
  readonly name: string;
  readonly runId: string;
  /** When the run started (ISO 8601). */
  readonly startedAt: string;
  readonly status: string;
  readonly requests: string;
  readonly rps: string;
  readonly p95Ms: string;
  readonly p99Ms: string;
  readonly errorRate: string;
  readonly thresholds: "passed" | "failed" | "none";
}

const HEADER = `# Load test reports

Made by \`edgeload report <run-id>\`; one row per report folder, newest first. Latency in ms
(http_req_duration); what a report contains is described in README.md.

| report | started | run | status | requests | rps | p95 | p99 | error rate | thresholds |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |
`;

export function indexEntry(name: string, input: ReportInput): IndexEntry {
  const e = input.summary.edgeload;
  const row = input.overall;
  return {
    name,
    runId: e.runId,
    startedAt: e.startedAt,
    status: e.status,
    requests: num(row?.requests),
    rps: num(row?.rps),
    p95Ms: num(row?.p95),
    p99Ms: num(row?.p99),
    errorRate: pct(row?.error_rate),
    thresholds: e.thresholds.length === 0 ? "none" : e.thresholdsPassed ? "passed" : "failed",
  };
}

/** The entry as a row of the index table. */
export function indexRow(e: IndexEntry): string {
  const started = e.startedAt.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
  const cells = [
    `[${e.name}](${encodeURI(e.name)}/report.md)`,
    started,
    `\`${e.runId}\``,
    e.status,
    e.requests,
    e.rps,
    e.p95Ms,
    e.p99Ms,
    e.errorRate,
    e.thresholds,
  ];
  return `| ${cells.join(" | ")} |`;
}

/**
 * The index with `entry`'s row added, replacing the row of a report by the same name;
 * `existing` is the current index, or null to start one. Rows stay sorted newest first
 * (the started column sorts as text).
 */
export function updateIndex(existing: string | null, entry: IndexEntry): string {
  const link = `[${entry.name}](`;
  const rows = (existing ?? "").split("\n").filter((l) => l.startsWith("| [") && !l.startsWith(`| ${link}`));
  rows.push(indexRow(entry));
  const started = (row: string) => row.split(" | ")[1] ?? "";
  rows.sort((a, b) => started(b).localeCompare(started(a)));
  return HEADER + rows.join("\n") + "\n";
}
