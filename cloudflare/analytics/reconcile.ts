/**
 * Reconciles what a run sent with what Cloudflare saw of it: requests per wall-clock minute
 * and status class (the run's per-second windows re-bucketed on the minutes Cloudflare
 * uses) against the zone's edge counts or the entry Worker's invocations, and the client's
 * latency against the Worker's wall time and the edge's TTFB. Every gap beyond tolerance
 * becomes a finding with the likeliest reason.
 *
 * Percentiles are never merged across groups: the client's come from the run's merged
 * histogram, Cloudflare's are Cloudflare's own quantiles for one group each (a script over
 * the window, a script in a minute, a namespace), shown per group.
 *
 * Pure: inputs are the run's summary and query rows and client.ts's CloudflareAnalytics;
 * `nowMs` is passed in.
 */
import type { QueryRow } from "../../core/results/query.ts";
import { table } from "../../core/run/summary-text.ts";
import { formatMs } from "../../core/metrics/clock-resolution.ts";
import type { Summary } from "../../core/run/summary.ts";
import type { TrendSummary } from "../../core/run/summary-figures.ts";
import type { CloudflareAnalytics } from "./client.ts";
import type { D1Group, DurableObjectGroup, Quantiles3, WorkerGroup, ZoneLatency } from "./queries.ts";

/** The run's side: when it ran, what it sent each second, and its latency. */
export interface RunTraffic {
  readonly runId: string;
  readonly target: string;
  readonly t0Ms: number;
  readonly endMs: number;
  /** Requests per second since t0 by status class: "2xx" … "5xx", "timeout", "connection". */
  readonly seconds: ReadonlyArray<{ readonly t: number; readonly statusClass: string; readonly requests: number }>;
  /** Client http_req_duration and TTFB (ms) from the run's merged histograms. */
  readonly durationMs: Quantiles3 | null;
  readonly ttfbMs: Quantiles3 | null;
  readonly saturation: readonly string[];
}

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

export interface ReconcileOptions {
  readonly nowMs: number;
  readonly marginS: number;
  /** Entry Worker script (the one the run's requests reach); defaults to none. */
  readonly entryScript?: string | null;
  /** A count gap is flagged beyond max(absolute, relative × sent). */
  readonly tolerance?: { readonly relative: number; readonly absolute: number };
  /** Client latency is "≫" the server's when above factor × it and more than minGapMs apart. */
  readonly latency?: { readonly factor: number; readonly minGapMs: number };
}

export type FindingKind =
  | "fewer_at_edge"
  | "more_at_edge"
  | "before_worker"
  | "edge_429"
  | "worker_errors"
  | "status_mix"
  | "boundary_shift"
  | "latency"
  | "outside_run"
  | "analytics_lag"
  | "sampled";

export interface Finding {
  readonly kind: FindingKind;
  /** Start of the minute (ISO) the finding is about, or null for the whole run. */
  readonly minute: string | null;
  readonly message: string;
}

export interface MinuteRow {
  readonly minute: string;
  /** Whether the minute overlaps the run (margin minutes are shown, not compared). */
  readonly inRun: boolean;
  readonly sent: number;
  readonly sentByClass: Readonly<Record<string, number>>;
  /** Zone requests (or the entry Worker's invocations without a zone); null without either. */
  readonly edge: number | null;
  readonly edgeByClass: Readonly<Record<string, number>> | null;
  readonly edge429: number;
  readonly worker: number | null;
  readonly workerErrors: number | null;
  /** The entry Worker's wall-time p99 for this minute (Cloudflare's quantile for that one group). */
  readonly workerWallP99Ms: number | null;
  /** The largest Cloudflare sampling interval among this minute's groups (1 = not sampled). */
  readonly sampleInterval: number;
  readonly delta: number | null;
}

export interface Reconciliation {
  readonly runId: string;
  readonly target: string;
  readonly window: { readonly startIso: string; readonly endIso: string; readonly marginS: number };
  /** What the run's counts are compared with. */
  readonly edgeSource: "zone" | "worker" | "none";
  readonly entryScript: string | null;
  readonly minutes: readonly MinuteRow[];
  readonly totals: { readonly sent: number; readonly edge: number | null; readonly worker: number | null };
  readonly latency: {
    readonly client: Quantiles3 | null;
    readonly clientTtfb: Quantiles3 | null;
    /** Per script over the whole window: Cloudflare's quantiles for each script's group. */
    readonly workers: readonly WorkerGroup[];
    readonly zone: ZoneLatency | null;
  };
  readonly workerStatuses: ReadonlyArray<{ readonly script: string; readonly status: string; readonly requests: number; readonly errors: number }>;
  readonly durableObjects: readonly DurableObjectGroup[];
  readonly d1: ReadonlyArray<Omit<D1Group, "minute" | "queryBatchP90Ms">>;
  readonly d1Minutes: readonly D1Group[];
  readonly colos: ReadonlyArray<{ readonly colo: string; readonly count: number }>;
  readonly findings: readonly Finding[];
  readonly unavailable: Readonly<Record<string, string>>;
}

const MINUTE_MS = 60_000;
/** Invocation statuses that are not errors (https://developers.cloudflare.com/workers/observability/metrics-and-analytics/#invocation-statuses). */
const OK_STATUSES = new Set(["success", "clientDisconnected"]);
/** Cloudflare's analytics arrive a few minutes late (same page: "a slight delay in aggregation"). */
const ANALYTICS_DELAY_MS = 5 * MINUTE_MS;

const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
const hhmm = (minuteIso: string) => minuteIso.slice(11, 16);
const classOf = (status: number) => `${Math.floor(status / 100)}xx`;
const add = (m: Record<string, number>, k: string, n: number) => void (m[k] = (m[k] ?? 0) + n);
const pct = (part: number, whole: number) => `${((part / whole) * 100).toFixed(1)}%`;

export function reconcile(run: RunTraffic, cf: CloudflareAnalytics, options: ReconcileOptions): Reconciliation {
  const tol = options.tolerance ?? { relative: 0.01, absolute: 2 };
  const entry = options.entryScript ?? null;
  const edgeSource = cf.zone ? "zone" : entry && cf.workers.length ? "worker" : "none";

  const sent = new Map<number, Record<string, number>>();
  for (const s of run.seconds) {
    const minute = Math.floor((run.t0Ms + s.t * 1000) / MINUTE_MS) * MINUTE_MS;
    add(sent.get(minute) ?? sent.set(minute, {}).get(minute)!, s.statusClass, s.requests);
  }
  const zone = new Map<number, { byClass: Record<string, number>; total: number; s429: number; sample: number }>();
  for (const g of cf.zone ?? []) {
    const m = Date.parse(g.minute);
    const z = zone.get(m) ?? zone.set(m, { byClass: {}, total: 0, s429: 0, sample: 1 }).get(m)!;
    add(z.byClass, classOf(g.status), g.count);
    z.total += g.count;
    if (g.status === 429) z.s429 += g.count;
    z.sample = Math.max(z.sample, g.sampleInterval ?? 1);
  }
  const worker = new Map<number, { requests: number; errors: number; sample: number }>();
  for (const g of cf.workers) {
    if (g.script !== entry || !g.minute) continue;
    const m = Date.parse(g.minute);
    const w = worker.get(m) ?? worker.set(m, { requests: 0, errors: 0, sample: 1 }).get(m)!;
    w.requests += g.requests;
    w.errors += g.errors;
    w.sample = Math.max(w.sample, g.sampleInterval ?? 1);
  }
  const wallP99 = new Map(cf.workersByMinute.filter((g) => g.script === entry && g.minute).map((g) => [Date.parse(g.minute!), g.wallP99Ms]));

  const all = [...new Set([...sent.keys(), ...zone.keys(), ...worker.keys()])].sort((a, b) => a - b);
  const minutes: MinuteRow[] = all.map((m) => {
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

  const findings: Finding[] = [
    ...countFindings(minutes, edgeSource, tol),
    ...workerErrorFindings(cf.workers),
    ...latencyFindings(run, cf, entry, options.latency ?? { factor: 2, minGapMs: 20 }),
    ...runLevelFindings(run, minutes, cf, options.nowMs),
  ];

  const statuses = new Map<string, { script: string; status: string; requests: number; errors: number }>();
  for (const g of cf.workers) {
    const key = `${g.script}\u0000${g.status}`;
    const s = statuses.get(key) ?? statuses.set(key, { script: g.script, status: g.status ?? "", requests: 0, errors: 0 }).get(key)!;
    s.requests += g.requests;
    s.errors += g.errors;
  }
  const d1 = new Map<string, { databaseId: string; readQueries: number; writeQueries: number; rowsRead: number; rowsWritten: number }>();
  for (const g of cf.d1) {
    const t =
      d1.get(g.databaseId) ??
      d1.set(g.databaseId, { databaseId: g.databaseId, readQueries: 0, writeQueries: 0, rowsRead: 0, rowsWritten: 0 }).get(g.databaseId)!;
    t.readQueries += g.readQueries;
    t.writeQueries += g.writeQueries;
    t.rowsRead += g.rowsRead;
    t.rowsWritten += g.rowsWritten;
  }
  const colos = new Map<string, number>();
  for (const g of cf.zone ?? []) colos.set(g.colo, (colos.get(g.colo) ?? 0) + g.count);

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
    workerStatuses: [...statuses.values()],
    durableObjects: cf.durableObjects,
    d1: [...d1.values()],
    d1Minutes: cf.d1,
    colos: [...colos.entries()].map(([colo, count]) => ({ colo, count })).sort((a, b) => b.count - a.count),
    findings,
    unavailable: cf.unavailable,
  };
}

/** Count gaps per minute: edge vs sent, zone vs Worker, 429s and the status mix. */
function countFindings(minutes: readonly MinuteRow[], source: Reconciliation["edgeSource"], tol: { relative: number; absolute: number }): Finding[] {
  const out: Finding[] = [];
  // An estimate from 1-in-k sampling is off by about √(n·k); three of those is noise, not a gap.
  const allowed = (n: number, sample: number) => Math.max(tol.absolute, tol.relative * n, sample > 1 ? 3 * Math.sqrt(n * sample) : 0);
  const edgeName = source === "zone" ? "the edge" : "the entry Worker";
  const paired = new Set<string>();
  minutes.forEach((m, i) => {
    if (!m.inRun || m.delta === null || m.edge === null) return;
    const limit = allowed(m.sent, m.sampleInterval);
    if (Math.abs(m.delta) > limit && !paired.has(m.minute)) {
      // A request sent at :59.9 may be logged at :00.1: a gap that the next minute gives back is a shift, not a loss.
      const next = minutes[i + 1];
      if (next?.inRun && next.delta !== null && Math.abs(m.delta + next.delta) <= limit && Math.sign(next.delta) === -Math.sign(m.delta)) {
        paired.add(next.minute);
        out.push({
          kind: "boundary_shift",
          minute: m.minute,
          message: `${hhmm(m.minute)} ${signed(m.delta)} and ${hhmm(next.minute)} ${signed(next.delta)} cancel out: requests near the minute boundary were counted on either side (clock skew between the shards and Cloudflare), not lost`,
        });
      } else if (m.delta < 0) {
        out.push({
          kind: "fewer_at_edge",
          minute: m.minute,
          message: `${edgeName} saw ${pct(-m.delta, m.sent)} fewer requests than the run sent in ${hhmm(m.minute)} (${m.edge} of ${m.sent}): ${fewerReason(m, source)}`,
        });
      } else {
        out.push({
          kind: "more_at_edge",
          minute: m.minute,
          message: `${edgeName} saw ${m.delta} more requests than the run sent in ${hhmm(m.minute)} (${m.edge} vs ${m.sent}): other traffic to the same ${source === "zone" ? "host" : "Worker"}, or retries`,
        });
      }
    }
    if (source === "zone" && m.worker !== null) {
      const beforeWorker = m.edge - m.worker;
      const explainedBy429 = m.edge429 > 0 && m.edge429 >= beforeWorker / 2;
      if (m.edge429 > 0) {
        const where =
          beforeWorker <= limit
            ? "came from the Worker itself (it ran for every request): application-level rate limiting"
            : explainedBy429
              ? `were answered before the Worker ran (${m.worker} invocations for ${m.edge} requests): a Cloudflare rate-limiting rule or WAF throttled the run`
              : "at the edge, some before the Worker ran (see below)";
        out.push({ kind: "edge_429", minute: m.minute, message: `${m.edge429} × 429 in ${hhmm(m.minute)} ${where}` });
      }
      if (beforeWorker > limit && !explainedBy429) {
        out.push({
          kind: "before_worker",
          minute: m.minute,
          message: `the edge answered ${m.edge} requests in ${hhmm(m.minute)} but the entry Worker ran ${m.worker} times: ${beforeWorker} were answered before the Worker (cache, WAF, rate limiting, or a route without the Worker)`,
        });
      }
    } else if (source === "zone" && m.edge429 > 0) {
      out.push({
        kind: "edge_429",
        minute: m.minute,
        message: `the edge answered ${m.edge429} × 429 in ${hhmm(m.minute)}: rate limiting (pass --scripts to tell a Cloudflare rule from the Worker's own)`,
      });
    }
    if (m.edgeByClass) {
      const diff = ["4xx", "5xx"].filter((c) => Math.abs((m.sentByClass[c] ?? 0) - (m.edgeByClass![c] ?? 0)) > limit);
      if (diff.length) {
        const show = (b: Readonly<Record<string, number>>) => diff.map((c) => `${c}=${b[c] ?? 0}`).join(" ");
        out.push({
          kind: "status_mix",
          minute: m.minute,
          message: `status mix differs in ${hhmm(m.minute)}: the client got ${show(m.sentByClass)}, the edge logged ${show(m.edgeByClass)}`,
        });
      }
    }
  });
  return out;
}

function fewerReason(m: MinuteRow, source: Reconciliation["edgeSource"]): string {
  const missing = -(m.delta ?? 0);
  const noResponse = (m.sentByClass.connection ?? 0) + (m.sentByClass.timeout ?? 0);
  if (noResponse >= missing / 2) return `${noResponse} of them never got a response on the client (connection errors or timeouts): lost before Cloudflare`;
  const answeredWithError = (m.sentByClass["4xx"] ?? 0) + (m.sentByClass["5xx"] ?? 0);
  if (source === "worker" && answeredWithError >= missing / 2)
    return `dropped before the Worker — the client got ${answeredWithError} 4xx/5xx in that minute (WAF, rate limiting or Cloudflare errors answered them)`;
  if (source === "worker") return "dropped before the Worker (WAF, rate limiting or cache?) or lost before Cloudflare";
  return "lost before Cloudflare (DNS, TLS or connection failures), or not yet in the analytics";
}

function workerErrorFindings(workers: readonly WorkerGroup[]): Finding[] {
  const byMinute = new Map<string, { script: string; minute: string; errors: number; statuses: Set<string> }>();
  for (const g of workers) {
    if (!g.minute || (g.errors === 0 && OK_STATUSES.has(g.status ?? "success"))) continue;
    const key = `${g.minute}\u0000${g.script}`;
    const e = byMinute.get(key) ?? byMinute.set(key, { script: g.script, minute: g.minute, errors: 0, statuses: new Set() }).get(key)!;
    e.errors += g.errors || g.requests;
    if (g.status && !OK_STATUSES.has(g.status)) e.statuses.add(g.status);
  }
  return [...byMinute.values()].map((e) => ({
    kind: "worker_errors",
    minute: e.minute,
    message: `Worker ${e.script} reported ${e.errors} error${e.errors === 1 ? "" : "s"} in ${hhmm(e.minute)} (${[...e.statuses].join(", ") || "errors"}): failures inside the Worker, which the client sees as 5xx (Workers errors 1101/1102)`,
  }));
}

function latencyFindings(run: RunTraffic, cf: CloudflareAnalytics, entry: string | null, rule: { factor: number; minGapMs: number }): Finding[] {
  const out: Finding[] = [];
  const much = (client: number | null, server: number | null) =>
    client !== null && server !== null && client > rule.factor * server && client - server > rule.minGapMs;
  const c = run.durationMs;
  const w = cf.workersWindow.find((g) => g.script === entry);
  const saturated = run.saturation.length ? `; the run's summary says the generator was saturated (${run.saturation[0]})` : "";
  if (c && w) {
    // The dataset has no wall-time P95, so compare like with like: p50 with p50, p99 with p99.
    for (const [q, client, server] of [
      ["p50", c.p50, w.wallP50Ms],
      ["p99", c.p99, w.wallP99Ms],
    ] as const) {
      if (much(client, server)) {
        out.push({
          kind: "latency",
          minute: null,
          message: `client ${q} ${formatMs(client!)} ≫ Worker ${entry} wall-time ${q} ${formatMs(server!)}: the time goes outside the Worker — network, TLS and connection setup, or queueing in the generator${saturated}`,
        });
      }
    }
    if (c.p99 !== null && w.wallP99Ms !== null && w.wallP99Ms > c.p99 * rule.factor && w.wallP99Ms - c.p99 > rule.minGapMs) {
      out.push({
        kind: "latency",
        minute: null,
        message: `Worker ${entry} wall-time p99 ${formatMs(w.wallP99Ms)} is above the client's p99 ${formatMs(c.p99)}: wall time includes waitUntil() work after the response, or traffic other than the run's`,
      });
    }
  }
  const z = cf.zoneLatency;
  if (c && z && much(c.p95, z.edgeTtfbMs.p95)) {
    out.push({
      kind: "latency",
      minute: null,
      message: `client p95 ${formatMs(c.p95!)} ≫ edge TTFB p95 ${formatMs(z.edgeTtfbMs.p95!)}: the time goes between the generator and Cloudflare's edge (network, or generator queueing)${saturated}`,
    });
  }
  return out;
}

function runLevelFindings(run: RunTraffic, minutes: readonly MinuteRow[], cf: CloudflareAnalytics, nowMs: number): Finding[] {
  const out: Finding[] = [];
  const outside = minutes.filter((m) => !m.inRun).reduce((a, m) => a + (m.edge ?? 0), 0);
  if (outside > 0)
    out.push({
      kind: "outside_run",
      minute: null,
      message: `${outside} requests in the margin minutes outside the run (other traffic, or the run's first and last requests): shown, not compared`,
    });
  const agoMs = nowMs - run.endMs;
  if (agoMs < ANALYTICS_DELAY_MS)
    out.push({
      kind: "analytics_lag",
      minute: null,
      message: `the run ended ${Math.max(0, Math.round(agoMs / 1000))} s ago: Cloudflare's analytics arrive a few minutes late, so the last minutes may be incomplete — run this again later`,
    });
  const sample = Math.max(1, ...minutes.map((m) => m.sampleInterval), ...cf.workersWindow.map((g) => g.sampleInterval ?? 1));
  if (sample > 1)
    out.push({
      kind: "sampled",
      minute: null,
      message: `Cloudflare sampled some groups (1 in up to ${sample.toFixed(1)}): its counts are estimates (https://developers.cloudflare.com/analytics/graphql-api/sampling/), and the tolerance widens with them`,
    });
  return out;
}

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));
const ms = (v: number | null | undefined) => (v === null || v === undefined ? "-" : formatMs(v));
const n = (v: number | null | undefined) => (v === null || v === undefined ? "-" : String(v));
const classes = (b: Readonly<Record<string, number>> | null, extra: readonly string[] = []) =>
  b === null ? "-" : ["2xx", "3xx", "4xx", "5xx", ...extra].map((c) => b[c] ?? 0).join("/");

/** The reconciliation as text tables, findings last. */
export function renderReconciliation(r: Reconciliation): string {
  const compared =
    r.edgeSource === "zone"
      ? "the zone's edge requests"
      : r.edgeSource === "worker"
        ? `the entry Worker ${r.entryScript}'s invocations`
        : "nothing (pass --zone or --scripts)";
  const lines = [
    `Cloudflare analytics for run ${r.runId} (${r.target})`,
    `  window ${r.window.startIso} … ${r.window.endIso} (run ± ${r.window.marginS} s); the run's requests are compared with ${compared}`,
    "",
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
    "",
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
  if (r.latency.workers.length) {
    lines.push(
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
    );
  }
  if (r.durableObjects.length) {
    lines.push(
      "",
      "Durable Object invocations per script and namespace",
      ...table(
        ["script", "namespace", "requests", "errors", "wall p50", "wall p99"],
        r.durableObjects.map((d) => [d.script, d.namespaceId, String(d.requests), String(d.errors), ms(d.wallP50Ms), ms(d.wallP99Ms)]),
      ),
    );
  }
  if (r.d1.length) {
    lines.push(
      "",
      "D1 per database (whole window; per-minute groups with query p90 in --format json)",
      ...table(
        ["database", "read queries", "write queries", "rows read", "rows written"],
        r.d1.map((d) => [d.databaseId, String(d.readQueries), String(d.writeQueries), String(d.rowsRead), String(d.rowsWritten)]),
      ),
    );
  }
  if (r.colos.length) lines.push("", `Edge data centers: ${r.colos.map((c) => `${c.colo} ${c.count}`).join(", ")}`);
  lines.push("", r.findings.length ? "Findings" : "Findings: none — Cloudflare saw what the run sent", ...r.findings.map((f) => `  - ${f.message}`));
  const missing = Object.values(r.unavailable);
  if (missing.length) lines.push("", "Not included", ...missing.map((m) => `  - ${m}`));
  return lines.join("\n");
}
