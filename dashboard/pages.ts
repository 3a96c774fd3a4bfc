/**
 * The dashboard's HTML: small shells the Worker serves after checking the session. What
 * they show is drawn in the browser by the scripts under public/dashboard/ (served as the
 * Worker's static assets, uPlot included: nothing comes from a CDN).
 */

/** Bumped with the scripts, so a browser never pairs a new page with a cached old script. */
const ASSET_VERSION = "3";

function shell(title: string, body: string, script: string, data: Record<string, string>): string {
  const attributes = Object.entries(data)
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/dashboard/vendor/uPlot.min.css?v=${ASSET_VERSION}">
<link rel="stylesheet" href="/dashboard/dashboard.css?v=${ASSET_VERSION}">
</head>
<body${attributes}>
${body}
<script src="/dashboard/vendor/uPlot.iife.min.js?v=${ASSET_VERSION}"></script>
<script type="module" src="/dashboard/${script}?v=${ASSET_VERSION}"></script>
</body>
</html>
`;
}

/**
 * One run, live: `run.js` fills it from the run's event stream. `abortCsrf`: the session's
 * CSRF token when it may abort the run (an abort link's session), else null (the button off).
 */
export function runPage(runId: string, abortCsrf: string | null): string {
  return shell(
    `edgeload · ${runId}`,
    `<header>
  <a class="home" href="/">edgeload</a>
  <h1 id="run-name">${escapeHtml(runId)}</h1>
  <span id="run-status" class="status" data-testid="status">connecting…</span>
  <button id="abort" type="button" data-testid="abort" ${abortCsrf ? "" : `disabled title="this dashboard link is read-only: edgeload abort ${escapeHtml(runId)}"`}>Abort</button>
</header>
<p id="run-meta" class="meta"></p>
<div id="progress" class="progress"><div id="progress-bar"></div></div>
<p id="notice" class="notice" hidden></p>
<section id="tiles" class="tiles" aria-label="live totals"></section>
<section class="charts">
  <figure><figcaption>Iterations per second: achieved and target</figcaption><div id="chart-rate" data-testid="chart-rate"></div></figure>
  <figure><figcaption>Latency (http_req_duration), ms
    <label>region <select id="region" data-testid="region"><option value="">all regions</option></select></label></figcaption>
    <div id="chart-latency" data-testid="chart-latency"></div></figure>
  <figure><figcaption>Errors per second and dropped iterations</figcaption><div id="chart-errors" data-testid="chart-errors"></div></figure>
  <figure><figcaption>Schedule lag p95 (ms) and requests in flight</figcaption><div id="chart-lag" data-testid="chart-lag"></div></figure>
</section>
<section id="final" class="final" hidden data-testid="final">
  <h2>Final summary</h2>
  <dl id="final-figures"></dl>
  <p><a id="report-link" href="#">Full report</a> · <a id="summary-link" href="#">summary JSON</a></p>
</section>
<section class="tables">
  <div><h2>Thresholds</h2><table id="thresholds" data-testid="thresholds"><thead><tr><th>metric</th><th>threshold</th><th>observed</th><th>verdict</th></tr></thead><tbody></tbody></table></div>
  <div><h2>Custom metrics</h2><table id="custom" data-testid="custom"><thead><tr><th>metric</th><th>type</th><th>value</th></tr></thead><tbody></tbody></table></div>
  <div class="wide" id="script-box" hidden><h2>Script errors and console <small id="script-count" data-testid="script-errors"></small></h2><table id="script" data-testid="script"><thead><tr><th>second</th><th>level</th><th>message</th><th>at / VU</th><th>count</th></tr></thead><tbody></tbody></table></div>
  <div class="wide"><h2>Shards</h2><table id="shards" data-testid="shards"><thead><tr><th>shard</th><th>region</th><th>last window</th><th>behind</th><th>lag p95</th><th>dropped</th><th>health</th></tr></thead><tbody></tbody></table></div>
</section>`,
    "run.js",
    { "run-id": runId, ...(abortCsrf ? { csrf: abortCsrf } : {}) },
  );
}

/** One schedule's runs over time: `schedule.js` draws them from GET /v1/schedules/:id/trend. */
export function schedulePage(scheduleId: string): string {
  return shell(
    `edgeload · ${scheduleId}`,
    `<header>
  <a class="home" href="/">edgeload</a>
  <h1 id="schedule-name">${escapeHtml(scheduleId)}</h1>
  <span id="schedule-state" class="status" data-testid="state">loading…</span>
</header>
<p id="schedule-meta" class="meta"></p>
<p class="meta">Each point is one scheduled run; click a point or a row to open its dashboard.</p>
<section class="charts">
  <figure><figcaption>Latency (http_req_duration) p50, p95, p99, ms</figcaption><div id="chart-latency" data-testid="chart-latency"></div></figure>
  <figure><figcaption>Error rate, %</figcaption><div id="chart-errors" data-testid="chart-errors"></div></figure>
  <figure><figcaption>Achieved rate, requests per second</figcaption><div id="chart-rate" data-testid="chart-rate"></div></figure>
</section>
<section class="tables">
  <div class="wide"><h2>Runs</h2><table id="turns" data-testid="turns"><thead><tr><th>turn</th><th>run</th><th>verdict</th><th>p50</th><th>p95</th><th>p99</th><th>errors</th><th>rate/s</th></tr></thead><tbody></tbody></table></div>
</section>`,
    "schedule.js",
    { "schedule-id": scheduleId },
  );
}

/** Two runs' per-second charts laid over each other, with `compare`'s verdict per metric: `compare.js`. */
export function comparePage(baselineId: string, candidateId: string): string {
  return shell(
    `edgeload · ${baselineId} → ${candidateId}`,
    `<header>
  <a class="home" href="/">edgeload</a>
  <h1>Compare <a id="baseline-link" href="#">${escapeHtml(baselineId)}</a> → <a id="candidate-link" href="#">${escapeHtml(candidateId)}</a></h1>
  <span id="compare-verdict" class="status" data-testid="verdict">loading…</span>
</header>
<p class="meta">Seconds since each run's start; the baseline dashed. A change counts when its whole confidence interval is beyond the practical minimum (GET /v1/runs/:a/compare/:b).</p>
<section class="charts">
  <figure><figcaption>Requests per second</figcaption><div id="chart-rate" data-testid="chart-rate"></div></figure>
  <figure><figcaption>Latency p95 (http_req_duration), ms</figcaption><div id="chart-latency" data-testid="chart-latency"></div></figure>
  <figure><figcaption>Failed requests per second</figcaption><div id="chart-errors" data-testid="chart-errors"></div></figure>
</section>
<section class="tables">
  <div class="wide"><h2>Metrics (all regions)</h2><table id="metrics" data-testid="metrics"><thead><tr><th>metric</th><th>baseline</th><th>candidate</th><th>change</th><th>interval</th><th>verdict</th></tr></thead><tbody></tbody></table></div>
</section>`,
    "compare.js",
    { baseline: baselineId, candidate: candidateId },
  );
}

/** Every run, newest first, each linking to its dashboard. */
export function indexPage(): string {
  return shell(
    "edgeload · runs",
    `<header><a class="home" href="/">edgeload</a><h1>Runs</h1></header>
<table id="runs" data-testid="runs"><thead><tr><th>run</th><th>name</th><th>status</th><th>target</th><th>started</th><th>duration</th><th>thresholds</th></tr></thead><tbody></tbody></table>
<p class="meta">Start one with <code>edgeload run</code>; this list refreshes every 5 s.</p>`,
    "index.js",
    {},
  );
}

/** Why the page is not shown, and how to get in (never a way to paste the token into a URL). */
export function deniedPage(reason: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>edgeload · sign-in needed</title>
<link rel="stylesheet" href="/dashboard/dashboard.css?v=${ASSET_VERSION}"></head>
<body><main class="denied"><h1>Not signed in</h1><p data-testid="denied">${escapeHtml(reason)}</p>
<p>Open a fresh dashboard link: <code>edgeload dashboard [run-id]</code> prints one (it opens once, within 10 minutes,
and signs this browser in to that page for 12 hours), or ask the API: <code>POST /v1/dashboard-links</code> with your token.</p></main></body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
