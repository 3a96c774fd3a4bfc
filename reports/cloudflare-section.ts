/**
 * The "Cloudflare's view" section of a report: what `edgeload cf-analytics` reconciled for
 * the run (cloudflare/analytics/reconcile.ts), as report blocks — requests per minute
 * against what the edge or the entry Worker saw, latency per source (each its own group's
 * quantiles, never merged), and the findings.
 */
import type { Reconciliation } from "../cloudflare/analytics/reconciliation.ts";
import type { Block, Cell } from "./document.ts";

const num = (v: number | null | undefined) => (v === null || v === undefined ? "-" : String(v));
const ms = (v: number | null | undefined) => (v === null || v === undefined ? "-" : `${Math.round(v * 1000) / 1000} ms`);

export function cloudflareBlocks(r: Reconciliation): Block[] {
  const source =
    r.edgeSource === "zone"
      ? "the zone's edge requests"
      : r.edgeSource === "worker"
        ? `the invocations of the entry Worker ${r.entryScript}`
        : "nothing (no zone or scripts given)";
  const latency: Cell[][] = [];
  if (r.latency.client)
    latency.push([["client ", { code: "http_req_duration" }], ms(r.latency.client.p50), ms(r.latency.client.p95), ms(r.latency.client.p99)]);
  if (r.latency.clientTtfb)
    latency.push([["client TTFB ", { code: "http_req_waiting" }], ms(r.latency.clientTtfb.p50), ms(r.latency.clientTtfb.p95), ms(r.latency.clientTtfb.p99)]);
  for (const w of r.latency.workers) latency.push([`Worker ${w.script} wall time`, ms(w.wallP50Ms), "n/a", ms(w.wallP99Ms)]);
  if (r.latency.zone) {
    latency.push(["edge TTFB (zone)", ms(r.latency.zone.edgeTtfbMs.p50), ms(r.latency.zone.edgeTtfbMs.p95), ms(r.latency.zone.edgeTtfbMs.p99)]);
    latency.push(["origin duration (zone)", ms(r.latency.zone.originMs.p50), ms(r.latency.zone.originMs.p95), ms(r.latency.zone.originMs.p99)]);
  }
  return [
    { kind: "heading", level: 2, text: "Cloudflare's view" },
    {
      kind: "paragraph",
      text: [
        `From Cloudflare's GraphQL Analytics for ${r.window.startIso} … ${r.window.endIso} (the run ± ${r.window.marginS} s); the run's requests are compared with ${source}.`,
      ],
    },
    {
      kind: "table",
      columns: ["minute (UTC)", "sent", "edge", "Δ", "worker", "worker errors", "wall p99"],
      numeric: [false, true, true, true, true, true, true],
      rows: [
        ...r.minutes.map((m) => [
          `${m.minute.slice(11, 16)}${m.inRun ? "" : " (margin)"}`,
          String(m.sent),
          num(m.edge),
          m.delta === null || !m.inRun ? "-" : `${m.delta > 0 ? "+" : ""}${m.delta}`,
          num(m.worker),
          num(m.workerErrors),
          ms(m.workerWallP99Ms),
        ]),
        [
          "run total",
          String(r.totals.sent),
          num(r.totals.edge),
          r.totals.edge === null ? "-" : String(r.totals.edge - r.totals.sent),
          num(r.totals.worker),
          "",
          "",
        ],
      ],
    },
    ...(latency.length
      ? [{ kind: "table", columns: ["latency source", "p50", "p95", "p99"], numeric: [false, true, true, true], rows: latency } as const]
      : []),
    r.findings.length
      ? { kind: "list", items: r.findings.map((f) => [f.message]) }
      : { kind: "paragraph", text: ["No gaps: Cloudflare saw what the run sent."] },
    ...(Object.keys(r.unavailable).length ? [{ kind: "paragraph", text: [`Not included: ${Object.values(r.unavailable).join("; ")}`] } as const] : []),
  ];
}
