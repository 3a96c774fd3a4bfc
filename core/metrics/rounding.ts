/**
 * How figures are rounded where they are shown or stored: milliseconds, rates and ratios to
 * three decimals (a microsecond, for a latency in ms), fractions to six. One definition, so
 * that a summary, the live view, a threshold's observed value, a capacity ramp and a report
 * round the same number the same way.
 */

/** `n` to three decimals, e.g. `round3(12.34567)` is `12.346`. */
export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** `n` to six decimals (rates of k6's `rate` metrics, such as http_req_failed). */
export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
