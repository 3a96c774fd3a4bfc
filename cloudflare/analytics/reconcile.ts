/**
 * Reconciles what a run sent with what Cloudflare saw of it: requests per wall-clock minute
 * and status class (the run's per-second windows re-bucketed on the minutes Cloudflare
 * uses) against the zone's edge counts or the entry Worker's invocations, and the client's
 * latency against the Worker's wall time and the edge's TTFB. Every gap beyond tolerance
 * becomes a finding with the likeliest reason (findings.ts); the result's shape is
 * reconciliation.ts's, its text reconciliation-text.ts's.
 *
 * Percentiles are never merged across groups: the client's come from the run's merged
 * histogram, Cloudflare's are Cloudflare's own quantiles for one group each (a script over
 * the window, a script in a minute, a namespace), shown per group.
 *
 * Pure: inputs are the run's summary and query rows and client.ts's CloudflareAnalytics;
 * `nowMs` is passed in.
 */
import type { QueryRow } from "../../core/results/query.ts";
import type { Summary } from "../../core/run/summary.ts";
import type { TrendSummary } from "../../core/run/summary-figures.ts";
import type { CloudflareAnalytics } from "./client.ts";
import { countFindings, latencyFindings, runLevelFindings, workerErrorFindings } from "./findings.ts";
import type { D1Group, Quantiles3, WorkerGroup, ZoneGroup } from "./queries.ts";
import type { Finding, MinuteRow, ReconcileOptions, Reconciliation, RunTraffic } from "./reconciliation.ts";

/** A run's traffic from its summary and `GET /v1/runs/:id/query?every=1s&by=status_class&metrics=requests` rows. */
export function runTrafficFrom(summary: Summary, rows: readonly QueryRow[]): RunTraffic {
  const e = summary.edgeload;
  const trend = (name: string): Quantiles3 | null => {
    const t = summary.metrics[name] as TrendSummary | undefined;
    return t ? { p50: t.med, p95: t["p(95)"], p99: t["p(99)"] } : null;
  };
  const seconds = rows.flatMap((r) =>
    typeof r.t === "number" && typeof r.status_class === "string" && typeof r.requests === "number"
      ? [{ t: r.t, statusClass: r.status_class, requests: r.requests }]
      : [],
  );
  return {
    runId: e.runId,
    target: e.target,
    t0Ms: Date.parse(e.startedAt),
    endMs: Date.parse(e.endedAt),
    seconds,
    durationMs: trend("http_req_duration"),
    ttfbMs: trend("http_req_waiting"),
    saturation: e.saturation,
  };
}

const MINUTE_MS = 60_000;

const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
const classOf = (status: number) => `${Math.floor(status / 100)}xx`;
const add = (m: Record<string, number>, k: string, n: number) => void (m[k] = (m[k] ?? 0) + n);

/** What the run's counts are compared with: the zone's edge requests, the entry Worker's invocations, or nothing. */
type EdgeSource = Reconciliation["edgeSource"];

export function reconcile(run: RunTraffic, cf: CloudflareAnalytics, options: ReconcileOptions): Reconciliation {
  const tol = options.tolerance ?? { relative: 0.01, absolute: 2 };
  const entry = options.entryScript ?? null;
  const edgeSource: EdgeSource = cf.zone ? "zone" : entry && cf.workers.length ? "worker" : "none";
  const minutes = minuteRows(run, cf, entry, edgeSource);

  const findings: Finding[] = [
    ...countFindings(minutes, edgeSource, tol),
    ...workerErrorFindings(cf.workers),
    ...latencyFindings(run, cf, entry, options.latency ?? { factor: 2, minGapMs: 20 }),
    ...runLevelFindings(run, minutes, cf, options.nowMs),
  ];

  const inRun = minutes.filter((m) => m.inRun);
  const sum = (f: (m: MinuteRow) => number | null) => (inRun.some((m) => f(m) !== null) ? inRun.reduce((a, m) => a + (f(m) ?? 0), 0) : null);
  return {
    runId: run.runId,
    target: run.target,
    window: { startIso: cf.window.startIso, endIso: cf.window.endIso, marginS: options.marginS },
    edgeSource,
    entryScript: entry,
    minutes,
    totals: { sent: sum((m) => m.sent) ?? 0, edge: sum((m) => m.edge), worker: sum((m) => m.worker) },
    latency: { client: run.durationMs, clientTtfb: run.ttfbMs, workers: cf.workersWindow, zone: cf.zoneLatency },
    workerStatuses: workerStatuses(cf.workers),
    durableObjects: cf.durableObjects,
    d1: d1Totals(cf.d1),
    d1Minutes: cf.d1,
    colos: coloCounts(cf.zone ?? []),
    findings,
    unavailable: cf.unavailable,
  };
}

/**
 * One row per wall-clock minute that the run sent in or Cloudflare counted in: the run's
 * requests by status class beside the edge's count (zone or entry Worker, `edgeSource`),
 * the entry Worker's invocations, errors and wall-time p99, and the gap.
 */
function minuteRows(run: RunTraffic, cf: CloudflareAnalytics, entry: string | null, edgeSource: EdgeSource): MinuteRow[] {
  const sent = sentByMinute(run);
  const zone = zoneByMinute(cf.zone ?? []);
  const worker = entryWorkerByMinute(cf.workers, entry);
  const wallP99 = new Map(cf.workersByMinute.filter((g) => g.script === entry && g.minute).map((g) => [Date.parse(g.minute!), g.wallP99Ms]));

  const all = [...new Set([...sent.keys(), ...zone.keys(), ...worker.keys()])].sort((a, b) => a - b);
  return all.map((m) => {
    const byClass = sent.get(m) ?? {};
    const total = Object.values(byClass).reduce((a, b) => a + b, 0);
    const z = zone.get(m);
    const w = worker.get(m);
    const edge = edgeSource === "zone" ? (z?.total ?? 0) : edgeSource === "worker" ? (w?.requests ?? 0) : null;
    const inRun = m + MINUTE_MS > run.t0Ms && m < run.endMs;
    return {
      minute: iso(m),
      inRun,
      sent: total,
      sentByClass: byClass,
      edge,
      edgeByClass: edgeSource === "zone" ? (z?.byClass ?? {}) : null,
      edge429: z?.s429 ?? 0,
      worker: entry && cf.workers.length ? (w?.requests ?? 0) : null,
      workerErrors: entry && cf.workers.length ? (w?.errors ?? 0) : null,
      workerWallP99Ms: wallP99.get(m) ?? null,
      sampleInterval: Math.max(z?.sample ?? 1, w?.sample ?? 1),
      delta: edge === null ? null : edge - total,
    };
  });
}

/** The run's per-second counts re-bucketed on the minutes Cloudflare uses, by status class. */
function sentByMinute(run: RunTraffic): Map<number, Record<string, number>> {
  const sent = new Map<number, Record<string, number>>();
  for (const s of run.seconds) {
    const minute = Math.floor((run.t0Ms + s.t * 1000) / MINUTE_MS) * MINUTE_MS;
    add(sent.get(minute) ?? sent.set(minute, {}).get(minute)!, s.statusClass, s.requests);
  }
  return sent;
}

/** The zone's edge requests per minute: by status class, in all, its 429s, and the coarsest sampling. */
function zoneByMinute(groups: readonly ZoneGroup[]) {
  const zone = new Map<number, { byClass: Record<string, number>; total: number; s429: number; sample: number }>();
  for (const g of groups) {
    const m = Date.parse(g.minute);
    const z = zone.get(m) ?? zone.set(m, { byClass: {}, total: 0, s429: 0, sample: 1 }).get(m)!;
    add(z.byClass, classOf(g.status), g.count);
    z.total += g.count;
    if (g.status === 429) z.s429 += g.count;
    z.sample = Math.max(z.sample, g.sampleInterval ?? 1);
  }
  return zone;
}

/** The entry Worker's invocations and errors per minute, and the coarsest sampling. */
function entryWorkerByMinute(groups: readonly WorkerGroup[], entry: string | null) {
  const worker = new Map<number, { requests: number; errors: number; sample: number }>();
  for (const g of groups) {
    if (g.script !== entry || !g.minute) continue;
    const m = Date.parse(g.minute);
    const w = worker.get(m) ?? worker.set(m, { requests: 0, errors: 0, sample: 1 }).get(m)!;
    w.requests += g.requests;
    w.errors += g.errors;
    w.sample = Math.max(w.sample, g.sampleInterval ?? 1);
  }
  return worker;
}

/** Every script's invocations and errors per status, over the window. */
function workerStatuses(groups: readonly WorkerGroup[]): Reconciliation["workerStatuses"] {
  const statuses = new Map<string, { script: string; status: string; requests: number; errors: number }>();
  for (const g of groups) {
    const key = `${g.script}\u0000${g.status}`;
    const s = statuses.get(key) ?? statuses.set(key, { script: g.script, status: g.status ?? "", requests: 0, errors: 0 }).get(key)!;
    s.requests += g.requests;
    s.errors += g.errors;
  }
  return [...statuses.values()];
}

/** Each D1 database's queries and rows, summed over its per-minute groups. */
function d1Totals(groups: readonly D1Group[]): Reconciliation["d1"] {
  const d1 = new Map<string, { databaseId: string; readQueries: number; writeQueries: number; rowsRead: number; rowsWritten: number }>();
  for (const g of groups) {
    const t =
      d1.get(g.databaseId) ??
      d1.set(g.databaseId, { databaseId: g.databaseId, readQueries: 0, writeQueries: 0, rowsRead: 0, rowsWritten: 0 }).get(g.databaseId)!;
    t.readQueries += g.readQueries;
    t.writeQueries += g.writeQueries;
    t.rowsRead += g.rowsRead;
    t.rowsWritten += g.rowsWritten;
  }
  return [...d1.values()];
}

/** The zone's requests per edge data center, most first. */
function coloCounts(groups: readonly ZoneGroup[]): Reconciliation["colos"] {
  const colos = new Map<string, number>();
  for (const g of groups) colos.set(g.colo, (colos.get(g.colo) ?? 0) + g.count);
  return [...colos.entries()].map(([colo, count]) => ({ colo, count })).sort((a, b) => b.count - a.count);
}
