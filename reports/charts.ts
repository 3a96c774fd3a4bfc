/**
 * A run report's charts, rendered to SVG on the server by Vega-Lite → Vega (no DOM, no
 * canvas): achieved vs target rate, latency percentiles by region, error rate by region and
 * the latency distribution.
 *
 * Inside a Worker, `eval` and `new Function` are forbidden, and Vega compiles its
 * expressions with `Function` by default. So the Vega spec is parsed with `{ast: true}` and
 * the view evaluates the ASTs with vega-interpreter, Vega's CSP-safe interpreter
 * (https://vega.github.io/vega/usage/interpreter). Without a canvas, Vega estimates text
 * widths from character counts, so the same data always gives the same SVG; the charts use
 * no clipping or gradients, whose element ids come from a process-wide counter.
 *
 * Pure apart from Vega itself: no Node or Workers APIs, so the CLI and the coordinator
 * render identical files.
 */
import { parse, View } from "vega";
import { expressionInterpreter } from "vega-interpreter";
import { compile, type TopLevelSpec } from "vega-lite";

/** One point of a per-second series; `value` null where the second had no samples. */
export interface SeriesPoint {
  readonly t: number;
  readonly series: string;
  readonly value: number | null;
}

/** One bar of the latency distribution, in milliseconds. */
export interface LatencyBin {
  readonly fromMs: number;
  readonly toMs: number;
  readonly count: number;
}

const WIDTH = 720;
const HEIGHT = 220;
const SECONDS_AXIS = { field: "t", type: "quantitative", title: "seconds since start", axis: { tickMinStep: 1 } } as const;

/** Renders a Vega-Lite spec to an SVG document, without code generation. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const runtime = parse(compile(spec).spec, undefined, { ast: true });
  const view = new View(runtime, { expr: expressionInterpreter, renderer: "none" });
  try {
    return roundCoordinates(await view.toSVG());
  } finally {
    view.finalize();
  }
}

/**
 * Numbers in the SVG to three decimals (a thousandth of a pixel). Vega writes full doubles,
 * whose last digits can differ between JavaScript engines (Node and workerd disagree on
 * some logarithms), so rounding makes the CLI's and the Worker's files the same bytes.
 */
function roundCoordinates(svg: string): string {
  return svg.replace(/\d+\.\d{4,}/g, (n) => String(Math.round(Number(n) * 1000) / 1000));
}

/** Lines of achieved and target iterations per second. */
export function rateChart(points: readonly SeriesPoint[]): TopLevelSpec {
  // A run that keeps its schedule draws achieved right over target: achieved wide and pale,
  // target thin and dashed, so both stay visible. Channels on one field share one legend.
  const series = (range: unknown[]) =>
    ({ field: "series", type: "nominal", title: null, sort: ["target", "achieved"], scale: { domain: ["target", "achieved"], range } }) as const;
  return {
    ...frame("Achieved vs target rate"),
    data: { values: present(points) },
    mark: { type: "line" },
    encoding: {
      x: SECONDS_AXIS,
      y: { field: "value", type: "quantitative", title: "iterations/s" },
      color: series(["#1f2328", "#f58518"]),
      strokeDash: series([
        [5, 4],
        [1, 0],
      ]),
      strokeWidth: series([1.5, 4]),
      opacity: series([1, 0.7]),
    },
  } as TopLevelSpec;
}

/** One line per region and percentile: colour is the region, the dash the percentile. */
export function latencyChart(points: ReadonlyArray<SeriesPoint & { readonly percentile: string }>): TopLevelSpec {
  return regionLines(
    "Latency by region (http_req_duration)",
    points,
    { title: "ms" },
    {
      strokeDash: { field: "percentile", type: "nominal", title: "percentile", sort: ["p50", "p95", "p99"] },
    },
  );
}

/** One line per region: the share of failed requests each second, in percent. */
export function errorRateChart(points: readonly SeriesPoint[]): TopLevelSpec {
  return regionLines("Error rate by region", points, { title: "failed requests (%)", scale: { domainMin: 0 } });
}

/** Per-second lines coloured by region (the points' `series`). */
function regionLines(title: string, points: readonly SeriesPoint[], y: object, more: object = {}): TopLevelSpec {
  return {
    ...frame(title),
    data: { values: present(points) },
    mark: { type: "line", strokeWidth: 1.5 },
    encoding: { x: SECONDS_AXIS, y: { field: "value", type: "quantitative", ...y }, color: { field: "series", type: "nominal", title: "region" }, ...more },
  } as TopLevelSpec;
}

/**
 * Request counts per latency bin on a log axis, with the whole run's p50, p95 and p99 as
 * rules over it, and the step of the clock that timed them in the subtitle.
 */
export function histogramChart(
  bins: readonly LatencyBin[],
  percentiles: ReadonlyArray<{ readonly label: string; readonly ms: number }>,
  clockStepMs: number | null = null,
): TopLevelSpec {
  const rules = percentiles.map((p, i) => ({ ...p, offsetPx: i * 14 }));
  const title = "Latency distribution (http_req_duration)";
  return {
    ...frame(title),
    // The clock's step is the resolution of every bar and rule below: say it on the chart.
    ...(clockStepMs !== null
      ? { title: { text: title, subtitle: `timed with a clock of ${clockStepMs >= 1 ? `${clockStepMs} ms` : `${clockStepMs * 1000} µs`} steps` } }
      : {}),
    layer: [
      {
        data: { values: bins },
        mark: { type: "bar", color: "#4c78a8" },
        encoding: {
          x: { field: "fromMs", type: "quantitative", scale: { type: "log" }, title: "ms (log scale)" },
          x2: { field: "toMs" },
          y: { field: "count", type: "quantitative", title: "requests" },
          // Both ends of both ranges: a bar spanning its bin from zero up, not a ranged bar at y = count.
          y2: { datum: 0 },
        },
      },
      {
        data: { values: rules },
        layer: [
          { mark: { type: "rule", color: "#e45756", strokeDash: [4, 3] }, encoding: { x: { field: "ms", type: "quantitative" } } },
          {
            mark: { type: "text", align: "left", baseline: "top", dx: 3, dy: 2, color: "#e45756" },
            // Labels stacked from the top (pixel offsets, no scale) so close percentiles stay legible.
            encoding: { x: { field: "ms", type: "quantitative" }, y: { field: "offsetPx", type: "quantitative", scale: null }, text: { field: "label" } },
          },
        ],
      },
    ],
  } as TopLevelSpec;
}

function frame(title: string) {
  return { $schema: "https://vega.github.io/schema/vega-lite/v6.json", title, width: WIDTH, height: HEIGHT, background: "white" } as const;
}

/** Seconds without samples are left out, not drawn as zero. */
function present<T extends SeriesPoint>(points: readonly T[]): T[] {
  return points.filter((p) => p.value !== null);
}
