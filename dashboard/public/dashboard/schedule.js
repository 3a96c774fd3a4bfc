// @ts-check
/**
 * A schedule's trend: one point per scheduled run (GET /v1/schedules/:id/trend), its
 * p50/p95/p99, error rate and achieved rate over time, and its verdict in the table. A click
 * on a point or a row opens that run's dashboard. Refreshes every 30 s.
 */
import { byId, ms, percent, rate, setRows } from "./common.js";

const id = document.body.dataset.scheduleId ?? "";

/** @typedef {{ dueAt: string, runId: string, baselineRunId: string | null, status: string | null, verdict: string | null, p50Ms: number | null, p95Ms: number | null, p99Ms: number | null, errorRate: number | null, ratePerS: number | null }} TrendRun */

/** @type {TrendRun[]} */
let runs = [];
/** @type {any[]} */
let charts = [];

const runLink = (/** @type {string} */ runId) => `/v1/runs/${encodeURIComponent(runId)}/dashboard`;

/**
 * A uPlot chart over the runs' turn times, with points (runs are far apart), a click opening
 * the run under the cursor.
 * @param {HTMLElement} el @param {object[]} series
 */
function trendChart(el, series) {
  // @ts-expect-error uPlot is the global its IIFE build defines (served from /dashboard/vendor/).
  const UPlot = window.uPlot;
  const u = new UPlot(
    {
      width: Math.max(320, el.clientWidth),
      height: 220,
      scales: {
        x: { time: true },
        y: { range: (/** @type {unknown} */ _u, /** @type {number} */ _min, /** @type {number} */ max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      series: [{ label: "turn" }, ...series.map((s) => ({ points: { show: true, size: 7 }, ...s }))],
      legend: { live: true },
    },
    [[], ...series.map(() => [])],
    el,
  );
  u.over.addEventListener("click", () => {
    const i = u.cursor.idx;
    if (i !== null && i !== undefined && runs[i]) location.href = runLink(runs[i].runId);
  });
  return u;
}

async function refresh() {
  const [meta, trend] = await Promise.all(
    [`/v1/schedules/${id}`, `/v1/schedules/${id}/trend`].map(async (url) => {
      const response = await fetch(url, { credentials: "same-origin" });
      return response.ok ? response.json() : null;
    }),
  );
  if (!meta || !trend) {
    byId("schedule-state").textContent = "not found";
    return;
  }
  byId("schedule-name").textContent = meta.name;
  const state = byId("schedule-state");
  state.textContent = meta.paused ? "paused" : "active";
  state.className = `status ${meta.paused ? "aborted" : "running"}`;
  const baseline = meta.baseline === "last-passed" ? "its last passed run" : meta.baseline.runId;
  byId("schedule-meta").textContent =
    `${meta.cron} (UTC) · baseline: ${baseline} · next turn: ${meta.nextDueAt ? new Date(meta.nextDueAt).toLocaleString() : "–"}`;
  runs = trend.runs;
  const x = runs.map((r) => Date.parse(r.dueAt) / 1000);
  const value = (/** @type {(r: TrendRun) => number | null} */ f) => runs.map((r) => f(r) ?? null);
  charts[0].setData([x, value((r) => r.p50Ms), value((r) => r.p95Ms), value((r) => r.p99Ms)]);
  charts[1].setData([x, value((r) => (r.errorRate === null ? null : r.errorRate * 100))]);
  charts[2].setData([x, value((r) => r.ratePerS)]);
  const newestFirst = [...runs].reverse();
  setRows(
    byId("turns"),
    newestFirst.map((r) => [
      new Date(r.dueAt).toLocaleString(),
      r.runId,
      r.verdict ?? r.status ?? "–",
      ms(r.p50Ms),
      ms(r.p95Ms),
      ms(r.p99Ms),
      r.errorRate === null ? "–" : percent(r.errorRate),
      r.ratePerS === null ? "–" : rate(r.ratePerS),
    ]),
    (row, i) => {
      const link = document.createElement("a");
      link.href = runLink(newestFirst[i].runId);
      link.textContent = newestFirst[i].runId;
      row.cells[1].replaceChildren(link);
      const verdict = document.createElement("span");
      verdict.className = `status ${newestFirst[i].verdict === "regressed" ? "failed" : (newestFirst[i].verdict ?? "running")}`;
      verdict.textContent = row.cells[2].textContent ?? "";
      verdict.dataset.testid = "verdict";
      row.cells[2].replaceChildren(verdict);
      row.dataset.verdict = newestFirst[i].verdict ?? "";
      // A judged run against a baseline: its charts laid over the baseline's.
      const base = newestFirst[i].baselineRunId;
      if (base) {
        const compare = document.createElement("a");
        compare.href = `/v1/runs/${encodeURIComponent(base)}/compare/${encodeURIComponent(newestFirst[i].runId)}/dashboard`;
        compare.textContent = " vs baseline";
        compare.dataset.testid = "compare";
        row.cells[2].append(compare);
      }
    },
  );
  byId("schedule-meta").dataset.runs = String(runs.length);
}

charts = [
  trendChart(byId("chart-latency"), [
    { label: "p50 ms", stroke: "#16a34a" },
    { label: "p95 ms", stroke: "#2563eb" },
    { label: "p99 ms", stroke: "#9333ea" },
  ]),
  trendChart(byId("chart-errors"), [{ label: "errors %", stroke: "#dc2626" }]),
  trendChart(byId("chart-rate"), [{ label: "requests/s", stroke: "#0f766e" }]),
];
await refresh();
setInterval(refresh, 30_000);
