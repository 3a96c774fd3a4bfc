// @ts-check
/**
 * The browser view of `compare`: two runs' per-second charts laid over each other (GET
 * /v1/runs/:id/timeseries, the "all" rows), seconds since each run's start, and the
 * comparison's verdict per metric (GET /v1/runs/:a/compare/:b).
 */
import { byId, ms, percent, setRows } from "./common.js";

const baseline = document.body.dataset.baseline ?? "";
const candidate = document.body.dataset.candidate ?? "";

/** @param {string} url */
async function json(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  return response.ok ? response.json() : null;
}

/**
 * One overlay chart: the baseline dashed, the candidate solid, on a common seconds axis.
 * @param {HTMLElement} el @param {string} label @param {number[]} x @param {(number | null)[]} a @param {(number | null)[]} b
 */
function overlay(el, label, x, a, b) {
  // @ts-expect-error uPlot is the global its IIFE build defines (served from /dashboard/vendor/).
  const UPlot = window.uPlot;
  return new UPlot(
    {
      width: Math.max(320, el.clientWidth),
      height: 220,
      scales: {
        x: { time: false },
        y: { range: (/** @type {unknown} */ _u, /** @type {number} */ _min, /** @type {number} */ max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [{ label: "seconds since start" }, {}],
      series: [
        { label: "t (s)" },
        { label: `${label} baseline`, stroke: "#94a3b8", dash: [6, 4], points: { show: false } },
        { label: `${label} candidate`, stroke: "#2563eb", points: { show: false } },
      ],
      legend: { live: true },
    },
    [x, a, b],
    el,
  );
}

/**
 * The "all" rows of a time series by second since its first window.
 * @param {{ points: Record<string, any>[] } | null} series
 */
function bySecond(series) {
  const rows = (series?.points ?? []).filter((p) => p.region === "all");
  const t0 = rows.length ? rows[0].t : 0;
  return new Map(rows.map((p) => [p.t - t0, p]));
}

const [seriesA, seriesB, comparison] = await Promise.all([
  json(`/v1/runs/${baseline}/timeseries`),
  json(`/v1/runs/${candidate}/timeseries`),
  json(`/v1/runs/${baseline}/compare/${candidate}`),
]);
/** @type {HTMLAnchorElement} */ (byId("baseline-link")).href = `/v1/runs/${baseline}/dashboard`;
/** @type {HTMLAnchorElement} */ (byId("candidate-link")).href = `/v1/runs/${candidate}/dashboard`;
const a = bySecond(seriesA);
const b = bySecond(seriesB);
const x = [...new Set([...a.keys(), ...b.keys()])].sort((p, q) => p - q);
const pick = (/** @type {Map<number, Record<string, any>>} */ m, /** @type {string} */ key) => x.map((t) => m.get(t)?.[key] ?? null);
overlay(byId("chart-rate"), "req/s", x, pick(a, "rps"), pick(b, "rps"));
overlay(byId("chart-latency"), "p95 ms", x, pick(a, "p95"), pick(b, "p95"));
overlay(byId("chart-errors"), "failed/s", x, pick(a, "failed"), pick(b, "failed"));

const verdict = byId("compare-verdict");
if (!comparison) {
  verdict.textContent = "not comparable (both runs must exist and have ended)";
  verdict.className = "status inconclusive";
} else {
  verdict.textContent = comparison.verdict;
  verdict.className = `status ${comparison.verdict === "regressed" ? "failed" : comparison.verdict === "no-data" ? "inconclusive" : "passed"}`;
  const all = comparison.metrics.filter((/** @type {{ region: string }} */ m) => m.region === "all");
  const show = (/** @type {Record<string, any>} */ m, /** @type {number | null} */ v) => (v === null ? "–" : m.unit === "ms" ? ms(v) : percent(v));
  setRows(
    byId("metrics"),
    all.map((/** @type {Record<string, any>} */ m) => [
      m.metric,
      show(m, m.baseline),
      show(m, m.candidate),
      m.change === null ? "–" : `${m.change >= 0 ? "+" : ""}${show(m, m.change)}`,
      m.interval ? `${show(m, m.interval[0])} … ${show(m, m.interval[1])}` : "–",
      m.verdict,
    ]),
    (row, i) => {
      row.dataset.metric = all[i].metric;
      if (all[i].verdict === "regressed") row.classList.add("bad");
    },
  );
}
