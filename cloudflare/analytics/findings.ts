/**
 * The findings of a reconciliation: each gap between what a run sent and what Cloudflare
 * saw beyond tolerance, with the likeliest reason — per minute for counts (edge against
 * sent, zone against Worker, 429s, the status mix) and Worker errors, for the whole run
 * for latency, traffic outside the run, analytics lag and sampling. Kept apart from the
 * re-bucketing in reconcile.ts because each rule is a reading of the numbers, and the
 * rules change on their own.
 */
import { formatMs } from "../../core/metrics/clock-resolution.ts";
import type { CloudflareAnalytics } from "./client.ts";
import type { WorkerGroup } from "./queries.ts";
import { hhmm, pct, signed, type Finding, type MinuteRow, type Reconciliation, type RunTraffic } from "./reconciliation.ts";

/** Invocation statuses that are not errors (https://developers.cloudflare.com/workers/observability/metrics-and-analytics/#invocation-statuses). */
const OK_STATUSES = new Set(["success", "clientDisconnected"]);
/** Cloudflare's analytics arrive a few minutes late (same page: "a slight delay in aggregation"). */
const ANALYTICS_DELAY_MS = 5 * 60_000;

/** Count gaps per minute: edge vs sent, zone vs Worker, 429s and the status mix. */
export function countFindings(minutes: readonly MinuteRow[], source: Reconciliation["edgeSource"], tol: { relative: number; absolute: number }): Finding[] {
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

export function workerErrorFindings(workers: readonly WorkerGroup[]): Finding[] {
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

export function latencyFindings(run: RunTraffic, cf: CloudflareAnalytics, entry: string | null, rule: { factor: number; minGapMs: number }): Finding[] {
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

export function runLevelFindings(run: RunTraffic, minutes: readonly MinuteRow[], cf: CloudflareAnalytics, nowMs: number): Finding[] {
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
