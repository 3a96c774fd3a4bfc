// @ts-check
/**
 * One run's live dashboard. Everything arrives on the run's event stream
 * (GET /v1/runs/:id/live, Server-Sent Events pushed by its RunCoordinator as windows merge):
 * `history` (every window so far, first), `window` (one more), `status` (each second),
 * `summary` and `end` once the run is over. The page only plots what it is sent; the
 * numbers (percentiles from merged histograms included) are the coordinator's.
 *
 * `window.edgeloadDashboard` exposes the state and the uPlot charts, for people poking in
 * the console and for the browser test.
 */
import { byId, chart, fixed, ms, percent, rate, setRows, tidy } from "./common.js";

const runId = document.body.dataset.runId ?? "";
/** The session's CSRF token when it may abort the run (an abort link's session); else read-only. */
const csrf = document.body.dataset.csrf ?? null;
const readOnly = csrf === null;

/** @type {{ points: any[]; status: any; summary: any; region: string; ended: boolean; charts: Record<string, any> }} */
const state = { points: [], status: null, summary: null, region: "", ended: false, charts: {} };
Object.assign(window, { edgeloadDashboard: state });

const charts = {
  rate: chart(byId("chart-rate"), [
    { label: "achieved /s", stroke: "#2563eb", width: 2 },
    { label: "target /s", stroke: "#9ca3af", dash: [6, 4] },
  ]),
  latency: chart(byId("chart-latency"), [
    { label: "p50", stroke: "#16a34a" },
    { label: "p95", stroke: "#d97706", width: 2 },
    { label: "p99", stroke: "#dc2626" },
  ]),
  errors: chart(byId("chart-errors"), [
    { label: "failed /s", stroke: "#dc2626", width: 2 },
    { label: "dropped /s", stroke: "#7c3aed" },
  ]),
  lag: chart(
    byId("chart-lag"),
    [
      { label: "lag p95 ms", stroke: "#0891b2", width: 2 },
      { label: "in flight", stroke: "#4b5563", scale: "n" },
    ],
    { n: {} },
  ),
};
state.charts = charts;

/** Recomputes every chart's columns from the points (cheap: one pass per chart). */
function redraw() {
  const pts = state.points;
  const t = pts.map((p) => p.t);
  const region = state.region;
  const lat = (p) => (region ? (p.regions[region] ?? { p50: null, p95: null, p99: null }) : p);
  charts.rate.setData([t, pts.map((p) => p.iterations), pts.map((p) => p.targetRate)]);
  charts.latency.setData([t, pts.map((p) => lat(p).p50), pts.map((p) => lat(p).p95), pts.map((p) => lat(p).p99)]);
  charts.errors.setData([t, pts.map((p) => p.failed), pts.map((p) => p.dropped)]);
  charts.lag.setData([t, pts.map((p) => p.lagP95), pts.map((p) => p.targetVUs ?? p.inFlight)]);
  const select = /** @type {HTMLSelectElement} */ (byId("region"));
  const regions = [...new Set(pts.flatMap((p) => Object.keys(p.regions)))].sort();
  for (const r of regions) {
    if (![...select.options].some((o) => o.value === r)) select.add(new Option(r, r));
  }
  showScript();
}

/** Script lines shown at most: the newest windows' first. */
const SCRIPT_ROWS = 100;

/**
 * A k6 script's uncaught errors (counted over every window) and each window's first distinct
 * errors and console lines, newest first: what `edgeload run` prints as the run goes.
 */
function showScript() {
  const windows = state.points.filter((p) => p.script);
  byId("script-box").hidden = windows.length === 0;
  if (windows.length === 0) return;
  const errors = windows.reduce((n, p) => n + p.script.errors, 0);
  const logs = windows.reduce((n, p) => n + p.script.logs, 0);
  byId("script-count").textContent = `${errors} uncaught error${errors === 1 ? "" : "s"} · ${logs} console line${logs === 1 ? "" : "s"}`;
  /** @type {string[][]} */
  const rows = [];
  for (const p of [...windows].reverse()) {
    if (p.script.aborted !== null) rows.push([`${p.t} s`, "abort", `test aborted: ${p.script.aborted}`, "–", "1"]);
    for (const e of p.script.errorSamples) rows.push([`${p.t} s`, "error", e.message, e.at ?? "–", String(e.count)]);
    for (const l of p.script.logSamples) rows.push([`${p.t} s`, l.level, l.message, `VU ${l.vu}`, String(l.count)]);
    if (rows.length >= SCRIPT_ROWS) break;
  }
  const shown = rows.slice(0, SCRIPT_ROWS);
  setRows(byId("script"), shown, (row, i) => row.classList.toggle("bad", shown[i][1] === "error" || shown[i][1] === "abort"));
}

/** Adds a window, or replaces it (a late portion arrives as the whole window again). */
function addPoint(point) {
  const at = state.points.findIndex((p) => p.t >= point.t);
  if (at === -1) state.points.push(point);
  else if (state.points[at].t === point.t) state.points[at] = point;
  else state.points.splice(at, 0, point);
}

function showStatus(s) {
  state.status = s;
  byId("run-name").textContent = s.name ? `${s.name} · ${s.id}` : s.id;
  const badge = byId("run-status");
  badge.textContent = s.status;
  badge.className = `status ${s.status}`;
  byId("run-meta").textContent =
    `${s.target} · started ${new Date(s.startedAt).toLocaleString()} · ${fixed(s.progress.elapsedS, 0)} of ${s.progress.durationS} s · ${s.live.shards} shards`;
  byId("progress-bar").style.width = `${Math.min(100, s.progress.fraction * 100)}%`;
  const live = s.live;
  const last = state.points[state.points.length - 1];
  // Once the run is over its rates are the summary's (over the whole run), not the last second's.
  const final = state.summary?.edgeload;
  const achieved = final ? final.achievedRatePerS : live.achievedRatePerS;
  const target = final ? final.targetRatePerS : live.targetRatePerS;
  const tiles = [
    ["achieved", `${rate(achieved)}/s`, target === undefined || target === null ? "" : `target ${rate(target)}/s`],
    ["requests", String(live.requests), `${live.failed} failed`],
    ["error rate", percent(live.requests ? live.failed / live.requests : 0), ""],
    ["p95", ms(live.p95Ms, clockStep()), final ? "whole run" : "whole run so far"],
    ["dropped", String(live.dropped), "iterations"],
    live.targetVUs !== undefined
      ? ["VUs", String(live.targetVUs), last ? `${fixed(last.inFlight, 1)} in flight` : ""]
      : ["in flight", last ? fixed(last.inFlight, 1) : "–", "mean, last window"],
    ["shards done", `${live.shardsDone} / ${live.shards}`, s.lastError ? `retrying: ${s.lastError}` : ""],
  ];
  const box = byId("tiles");
  box.replaceChildren(
    ...tiles.map(([label, value, note]) => {
      const tile = document.createElement("div");
      tile.className = "tile";
      tile.dataset.testid = `tile-${label.replace(/\s+/g, "-")}`;
      const v = document.createElement("strong");
      v.textContent = value;
      const l = document.createElement("span");
      l.textContent = label;
      const n = document.createElement("small");
      n.textContent = note;
      tile.append(v, l, n);
      return tile;
    }),
  );
  setRows(
    byId("thresholds"),
    s.thresholds.map((t) => [t.metric, t.threshold, t.observed === null ? "–" : String(t.observed), thresholdWord(t)]),
    (row, t) => row.classList.toggle("bad", !s.thresholds[t].ok),
  );
  setRows(
    byId("custom"),
    Object.entries(s.customMetrics).map(([name, m]) => [name, m.type, customValue(name, m)]),
  );
  const nowS = (Date.now() - s.t0Ms) / 1000;
  setRows(
    byId("shards"),
    s.shardHealth.map((h) => [
      String(h.index),
      h.region,
      h.lastWindowS === null ? "–" : `${h.lastWindowS} s`,
      h.done ? "done" : h.lastWindowS === null ? "–" : `${fixed(Math.max(0, nowS - h.lastWindowS - 1), 1)} s`,
      ms(h.lagP95, clockStep()),
      String(h.dropped),
      h.saturated ? `saturated: ${h.reasons.join("; ")}` : "ok",
    ]),
    (row, i) => row.classList.toggle("bad", s.shardHealth[i].saturated),
  );
  const abort = /** @type {HTMLButtonElement} */ (byId("abort"));
  if (!readOnly) abort.disabled = ["passed", "failed", "inconclusive", "aborted", "error", "finishing"].includes(s.status);
}

/** pass, FAIL, or "no data" for a threshold whose metric was never recorded (it cannot pass). */
function thresholdWord(t) {
  const state = t.state ?? (t.ok ? "passed" : "failed");
  if (state === "no-data") return "no data";
  return state === "passed" ? "pass" : t.abortOnFail ? "FAIL (aborts)" : "FAIL";
}

/** Custom trends that are scores, not times: k6/browser's CLS (a layout shift score, 0.1 is "good"). */
const UNITLESS_TRENDS = new Set(["browser_web_vital_cls"]);

function customValue(name, m) {
  if (m.type === "counter") return `${m.count} (${rate(m.rate)}/s)`;
  if (m.type === "rate") return `${percent(m.value)} (${m.passes} of ${m.passes + m.fails})`;
  if (UNITLESS_TRENDS.has(name.replace(/\{.*$/, ""))) return `p95 ${fixed(m["p(95)"], 3)} · med ${fixed(m.med, 3)}`;
  return `p95 ${ms(m["p(95)"], clockStep())} · med ${ms(m.med, clockStep())}`;
}

/** The run's clock step (ms): the summary's once the run is over, else the live view's. */
function clockStep() {
  return state.summary?.edgeload.clock?.resolutionMs ?? state.status?.live.clockResolutionMs ?? null;
}

/** "passed", or the verdict with its reasons: why a run failed or could not be told. */
function verdictText(v) {
  return v.kind === "passed" ? "passed" : `${v.kind}: ${v.reasons.join("; ")}`;
}

/** The final figures, exactly as the summary API has them. */
function showSummary(summary) {
  state.summary = summary;
  const m = summary.metrics;
  const d = m.http_req_duration;
  const figures = [
    ["status", summary.edgeload.status],
    ["requests", m.http_reqs.count],
    ["failed rate", m.http_req_failed.value],
    ["achieved rate", summary.edgeload.achievedRatePerS],
    ["p50 ms", d ? d.med : null],
    ["p95 ms", d ? d["p(95)"] : null],
    ["p99 ms", d ? d["p(99)"] : null],
    ["dropped", m.dropped_iterations.count],
    [
      "thresholds",
      summary.edgeload.thresholdsPassed ? "passed" : summary.edgeload.thresholds.some((t) => thresholdWord(t).startsWith("FAIL")) ? "failed" : "no data",
    ],
    // Summaries stored before verdicts were kept have none: their status is the verdict.
    ["verdict", summary.edgeload.verdict ? verdictText(summary.edgeload.verdict) : summary.edgeload.status],
    ["exit code", summary.edgeload.exitCode ?? null],
    // A k6 script's uncaught iteration errors; null for other runs (and summaries from before they were counted).
    ["script errors", summary.edgeload.scriptErrors?.total ?? null],
  ];
  byId("final-figures").replaceChildren(
    ...figures.map(([label, value]) => {
      const pair = document.createElement("div");
      const dt = document.createElement("dt");
      dt.textContent = String(label);
      const dd = document.createElement("dd");
      dd.dataset.testid = `final-${String(label).replace(/\s+/g, "-")}`;
      dd.dataset.value = value === null ? "" : String(value);
      // Latencies shown to the clock's step; data-value keeps the summary's figure as it is.
      dd.textContent = value === null ? "–" : String(label).endsWith(" ms") ? ms(Number(value), clockStep()).replace(/ ms$/, "") : String(value);
      pair.append(dt, dd);
      return pair;
    }),
  );
  /** @type {HTMLAnchorElement} */ (byId("report-link")).href = `/v1/runs/${runId}/report`;
  /** @type {HTMLAnchorElement} */ (byId("summary-link")).href = `/v1/runs/${runId}/summary`;
  byId("final").hidden = false;
  if (state.status) showStatus(state.status);
}

function notice(text) {
  const el = byId("notice");
  el.textContent = text;
  el.hidden = !text;
}

const source = new EventSource(`/v1/runs/${runId}/live`);
source.addEventListener("history", (e) => {
  state.points = JSON.parse(/** @type {MessageEvent} */ (e).data);
  redraw();
  notice("");
});
source.addEventListener("window", (e) => {
  addPoint(JSON.parse(/** @type {MessageEvent} */ (e).data));
  redraw();
});
source.addEventListener("status", (e) => showStatus(JSON.parse(/** @type {MessageEvent} */ (e).data)));
source.addEventListener("summary", (e) => showSummary(JSON.parse(/** @type {MessageEvent} */ (e).data)));
source.addEventListener("end", () => {
  state.ended = true;
  source.close();
});
source.onerror = () => {
  // EventSource reconnects by itself (and is sent the history again); a refused stream closes.
  if (!state.ended)
    notice(
      source.readyState === EventSource.CLOSED
        ? "The live view was refused: reload the page, or open a fresh dashboard link."
        : "Connection lost; reconnecting…",
    );
};

byId("region").addEventListener("change", (e) => {
  state.region = /** @type {HTMLSelectElement} */ (e.target).value;
  redraw();
});

byId("abort").addEventListener("click", async () => {
  const button = /** @type {HTMLButtonElement} */ (byId("abort"));
  button.disabled = true;
  button.textContent = "Aborting…";
  const response = await fetch(`/v1/runs/${runId}/abort`, { method: "POST", credentials: "same-origin", headers: { "x-edgeload-csrf": String(csrf) } });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    notice(`Abort refused: ${problem.detail ?? response.status}`);
    button.disabled = false;
  }
  button.textContent = "Abort";
});

window.addEventListener(
  "resize",
  tidy(() => Object.values(charts).forEach((c) => c.setSize({ width: c.root.parentElement.clientWidth, height: c.height }))),
);
