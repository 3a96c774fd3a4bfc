/**
 * A reconciliation as text tables, findings last: requests per minute, latency per source
 * (each its own group's quantiles), Worker, Durable Object and D1 groups, edge data
 * centers. What `edgeload cf-analytics` prints; apart from reconcile.ts because the
 * comparison is pure numbers and this is only how they read.
 */
import { formatMs } from "../../core/metrics/clock-resolution.ts";
import { table } from "../../core/run/text-format.ts";
import { hhmm, pct, signed, type Reconciliation } from "./reconciliation.ts";

const ms = (v: number | null | undefined) => (v === null || v === undefined ? "-" : formatMs(v));
const n = (v: number | null | undefined) => (v === null || v === undefined ? "-" : String(v));
const classes = (b: Readonly<Record<string, number>> | null, extra: readonly string[] = []) =>
  b === null ? "-" : ["2xx", "3xx", "4xx", "5xx", ...extra].map((c) => b[c] ?? 0).join("/");

/** The reconciliation as text tables, findings last. */
export function renderReconciliation(r: Reconciliation): string {
  return [
    ...heading(r),
    "",
    ...minutesSection(r),
    "",
    ...latencySection(r),
    ...workersSection(r),
    ...durableObjectsSection(r),
    ...d1Section(r),
    ...(r.colos.length ? ["", `Edge data centers: ${r.colos.map((c) => `${c.colo} ${c.count}`).join(", ")}`] : []),
    "",
    ...findingsSection(r),
    ...notIncludedSection(r),
  ].join("\n");
}

/** The run, the window queried, and what the run's requests are compared with. */
function heading(r: Reconciliation): string[] {
  const compared =
    r.edgeSource === "zone"
      ? "the zone's edge requests"
      : r.edgeSource === "worker"
        ? `the entry Worker ${r.entryScript}'s invocations`
        : "nothing (pass --zone or --scripts)";
  return [
    `Cloudflare analytics for run ${r.runId} (${r.target})`,
    `  window ${r.window.startIso} … ${r.window.endIso} (run ± ${r.window.marginS} s); the run's requests are compared with ${compared}`,
  ];
}

/** Requests per minute, sent against counted, with the gap inside the run and a run-total row. */
function minutesSection(r: Reconciliation): string[] {
  return [
    "Requests per minute (UTC)  — client 2xx/3xx/4xx/5xx/no response, edge 2xx/3xx/4xx/5xx",
    ...table(
      ["minute", "sent", "edge", "Δ", "client", "edge by class", "worker", "errors", "wall p99"],
      [
        ...r.minutes.map((m) => [
          `${hhmm(m.minute)}${m.inRun ? "" : " (margin)"}`,
          String(m.sent),
          n(m.edge),
          m.delta === null || !m.inRun ? "-" : m.sent ? `${signed(m.delta)} (${pct(m.delta, m.sent)})` : signed(m.delta),
          `${classes(m.sentByClass)}/${(m.sentByClass.connection ?? 0) + (m.sentByClass.timeout ?? 0)}`,
          classes(m.edgeByClass),
          n(m.worker),
          n(m.workerErrors),
          ms(m.workerWallP99Ms),
        ]),
        [
          "run total",
          String(r.totals.sent),
          n(r.totals.edge),
          r.totals.edge === null ? "-" : signed(r.totals.edge - r.totals.sent),
          "",
          "",
          n(r.totals.worker),
          "",
          "",
        ],
      ],
    ),
  ];
}

/** Latency per source over the window: the client's, each Worker's wall time, the zone's edge and origin. */
function latencySection(r: Reconciliation): string[] {
  return [
    "Latency over the window — each row its own group's quantiles, never merged",
    ...table(
      ["source", "p50", "p95", "p99"],
      [
        ...(r.latency.client ? [["client http_req_duration", ms(r.latency.client.p50), ms(r.latency.client.p95), ms(r.latency.client.p99)]] : []),
        ...(r.latency.clientTtfb
          ? [["client TTFB (http_req_waiting)", ms(r.latency.clientTtfb.p50), ms(r.latency.clientTtfb.p95), ms(r.latency.clientTtfb.p99)]]
          : []),
        ...r.latency.workers.map((w) => [`Worker ${w.script} wall time`, ms(w.wallP50Ms), "n/a", ms(w.wallP99Ms)]),
        ...(r.latency.zone
          ? [
              ["edge TTFB (zone)", ms(r.latency.zone.edgeTtfbMs.p50), ms(r.latency.zone.edgeTtfbMs.p95), ms(r.latency.zone.edgeTtfbMs.p99)],
              ["origin duration (zone)", ms(r.latency.zone.originMs.p50), ms(r.latency.zone.originMs.p95), ms(r.latency.zone.originMs.p99)],
            ]
          : []),
      ],
    ),
  ];
}

/** Each Worker script's invocations, CPU, wall time and duration, then its statuses; none, no section. */
function workersSection(r: Reconciliation): string[] {
  if (!r.latency.workers.length) return [];
  return [
    "",
    "Worker invocations per script (whole window; CPU and wall time per script group; duration in GB-s)",
    ...table(
      ["script", "requests", "errors", "subrequests", "cpu p50", "cpu p99", "wall p50", "wall p99", "duration p50", "duration p99"],
      r.latency.workers.map((w) => [
        w.script,
        String(w.requests),
        String(w.errors),
        String(w.subrequests),
        ms(w.cpuP50Ms),
        ms(w.cpuP99Ms),
        ms(w.wallP50Ms),
        ms(w.wallP99Ms),
        n(w.durationP50GbS),
        n(w.durationP99GbS),
      ]),
    ),
    `  statuses: ${r.workerStatuses.map((s) => `${s.script} ${s.status} ${s.requests}`).join(", ")}`,
  ];
}

/** Durable Object invocations per script and namespace; none, no section. */
function durableObjectsSection(r: Reconciliation): string[] {
  if (!r.durableObjects.length) return [];
  return [
    "",
    "Durable Object invocations per script and namespace",
    ...table(
      ["script", "namespace", "requests", "errors", "wall p50", "wall p99"],
      r.durableObjects.map((d) => [d.script, d.namespaceId, String(d.requests), String(d.errors), ms(d.wallP50Ms), ms(d.wallP99Ms)]),
    ),
  ];
}

/** D1 queries and rows per database over the window; none, no section. */
function d1Section(r: Reconciliation): string[] {
  if (!r.d1.length) return [];
  return [
    "",
    "D1 per database (whole window; per-minute groups with query p90 in --format json)",
    ...table(
      ["database", "read queries", "write queries", "rows read", "rows written"],
      r.d1.map((d) => [d.databaseId, String(d.readQueries), String(d.writeQueries), String(d.rowsRead), String(d.rowsWritten)]),
    ),
  ];
}

/** The findings, or that Cloudflare saw what the run sent. */
function findingsSection(r: Reconciliation): string[] {
  return [r.findings.length ? "Findings" : "Findings: none — Cloudflare saw what the run sent", ...r.findings.map((f) => `  - ${f.message}`)];
}

/** The datasets Cloudflare did not answer for, and why; none, no section. */
function notIncludedSection(r: Reconciliation): string[] {
  const missing = Object.values(r.unavailable);
  return missing.length ? ["", "Not included", ...missing.map((m) => `  - ${m}`)] : [];
}
