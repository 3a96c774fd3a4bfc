// @ts-check
/** Helpers shared by the dashboard's pages: DOM, number formats, and uPlot charts. */

/** @param {string} id */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

/** @param {number | null | undefined} n @param {number} digits */
export function fixed(n, digits) {
  return n === null || n === undefined ? "–" : n.toFixed(digits);
}

/**
 * A latency in milliseconds, to no finer than the run's clock step when it is known
 * (`stepMs`: 1 ms under workerd, whose clock moves only at I/O): "34 ms", not "33.92 ms".
 * @param {number | null | undefined} n @param {number | null} [stepMs]
 */
export const ms = (n, stepMs = null) => {
  if (n === null || n === undefined) return "–";
  const digits = n < 10 ? 2 : 1;
  return `${n.toFixed(stepMs ? Math.min(digits, msDecimals(stepMs)) : digits)} ms`;
};

/** Decimals a figure carries at a clock step (as core/metrics/clock-resolution.ts): 1 ms → 0, 0.1 ms → 1. @param {number} stepMs */
export const msDecimals = (stepMs) => Math.max(0, Math.min(2, Math.ceil(-Math.log10(stepMs) - 1e-9)));
/** @param {number} n */
export const percent = (n) => `${(n * 100).toFixed(2)} %`;
/** @param {number} n */
export const rate = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/**
 * Fills a table's body with rows of cell texts (textContent: nothing from the API is
 * parsed as HTML). `decorate(row, index)` may style a row.
 * @param {HTMLElement} table @param {string[][]} rows @param {(row: HTMLTableRowElement, index: number) => void} [decorate]
 */
export function setRows(table, rows, decorate) {
  const body = /** @type {HTMLTableElement} */ (table).tBodies[0];
  body.replaceChildren(
    ...rows.map((cells, i) => {
      const row = document.createElement("tr");
      for (const text of cells) row.insertCell().textContent = text;
      decorate?.(row, i);
      return row;
    }),
  );
}

/** A function that runs `f` at most once per animation frame. @param {() => void} f */
export function tidy(f) {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      f();
    });
  };
}

/**
 * A uPlot line chart over seconds since T0, filling its container's width.
 * @param {HTMLElement} el @param {object[]} series @param {Record<string, object>} [scales]
 */
export function chart(el, series, scales = {}) {
  // @ts-expect-error uPlot is the global its IIFE build defines (served from /dashboard/vendor/).
  const UPlot = window.uPlot;
  const extraAxes = Object.keys(scales).map((scale) => ({ scale, side: 1, grid: { show: false } }));
  // Every y axis starts at 0, so a 39-to-41 wobble does not look like a collapse.
  const fromZero = { range: (/** @type {unknown} */ _u, /** @type {number} */ _min, /** @type {number} */ max) => [0, max > 0 ? max * 1.1 : 1] };
  return new UPlot(
    {
      width: Math.max(320, el.clientWidth),
      height: 220,
      scales: { x: { time: false }, y: fromZero, ...Object.fromEntries(Object.keys(scales).map((k) => [k, { ...fromZero, ...scales[k] }])) },
      axes: [{ label: "seconds since start" }, {}, ...extraAxes],
      series: [{ label: "t (s)" }, ...series.map((s) => ({ spanGaps: false, points: { show: false }, ...s }))],
      legend: { live: true },
    },
    [[], ...series.map(() => [])],
    el,
  );
}
