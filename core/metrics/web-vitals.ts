/**
 * Web vitals as k6's browser module records them: one trend per vital (milliseconds, but CLS,
 * a score without unit), each sample tagged with its page's URL and its rating. The ratings
 * are the web-vitals library's (which k6 injects into pages), from web.dev's thresholds: good
 * up to the first bound, poor above the second, needs-improvement between.
 */

export type WebVital = "ttfb" | "fcp" | "lcp" | "inp" | "cls";
export type WebVitalRating = "good" | "needs-improvement" | "poor";

/** [good up to, poor above], milliseconds (web.dev/articles/ttfb, /fcp, /lcp, /inp), and CLS's score (/cls). */
export const WEB_VITAL_BOUNDS_MS: Readonly<Record<WebVital, readonly [number, number]>> = {
  ttfb: [800, 1800],
  fcp: [1800, 3000],
  lcp: [2500, 4000],
  inp: [200, 500],
  cls: [0.1, 0.25],
};

export function webVitalRating(vital: WebVital, ms: number): WebVitalRating {
  const [good, poor] = WEB_VITAL_BOUNDS_MS[vital];
  if (ms <= good) return "good";
  return ms <= poor ? "needs-improvement" : "poor";
}

/** k6's metric name of a vital: `browser_web_vital_lcp`. */
export const webVitalMetric = (vital: WebVital) => `browser_web_vital_${vital}` as const;

/**
 * What a page measured: after a navigation TTFB, FCP and LCP; when it is left, INP and CLS,
 * which grow with the page's life. Null or absent where it has no such entry (nothing painted
 * yet, no interaction).
 */
export type PageVitals = Readonly<Partial<Record<WebVital, number | null>>>;

const VITALS: readonly WebVital[] = ["ttfb", "fcp", "lcp", "inp", "cls"];

/** The samples of one page's vitals, as trends tagged with the URL and rating. */
export function webVitalSamples(vitals: PageVitals, url: string): Array<{ name: string; value: number; tags: Record<string, string> }> {
  const out: Array<{ name: string; value: number; tags: Record<string, string> }> = [];
  for (const vital of VITALS) {
    const ms = vitals[vital];
    if (ms === undefined) continue;
    if (ms === null || !Number.isFinite(ms) || ms < 0) continue;
    out.push({ name: webVitalMetric(vital), value: ms, tags: { url, rating: webVitalRating(vital, ms) } });
  }
  return out;
}
