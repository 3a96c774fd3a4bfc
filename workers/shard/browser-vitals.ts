/**
 * k6's web vitals, read in the shard's pages (core/metrics/web-vitals.ts gives names, ratings
 * and samples). Two moments, as the vitals themselves come:
 *
 * - After a navigation (goto, reload, waitForNavigation): TTFB, FCP and LCP, from the page's
 *   navigation timing and buffered performance observers (VITALS_PROBE).
 * - When a page is left: INP and CLS grow with the page's life, so a script installed in every
 *   document of a context (VITALS_SCRIPT) keeps them and gives them once — when the shard asks
 *   before it navigates or closes the page or the iteration ends (reportVitals), or, when the
 *   document is hidden without the shard's asking (a click that navigates away), to a CDP
 *   binding of a session of the page's own (watchVitals), at beforeunload, while the
 *   document is still the page's (at pagehide the call is lost once the next one has
 *   committed), else at pagehide. Playwright's exposeBinding would drop such a call: it looks
 *   up the document's context after an await, and by then it is gone. The click that leaves
 *   the page is not in its INP: its entry would come after a frame the document never shows. The calculations are the web-vitals
 *   library's, which k6 injects: CLS the largest session window of shifts without recent input
 *   (gaps under 1 s, at most 5 s), INP the longest interaction, or the 98th percentile's
 *   estimate past 50 interactions (entries of 16 ms and more, the least the browser gives).
 *
 * Expressions and scripts, not functions: Workers cannot build functions from text.
 */
import type { BrowserContext, CDPSession, Page } from "@cloudflare/playwright";
import { type PageVitals, webVitalSamples } from "../../core/metrics/web-vitals.ts";
import type { Sample } from "../../k6-compat/runtime/wire.ts";

/** TTFB, FCP and LCP of the page's navigation, waiting up to a second for paint entries (they arrive after the frame that painted). */
const VITALS_PROBE = `new Promise((resolve) => {
  const nav = performance.getEntriesByType("navigation")[0];
  const ttfb = nav ? Math.max(nav.responseStart - (nav.activationStart || 0), 0) : null;
  let fcp = null, lcp = null;
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) lcp = e.startTime; }).observe({ type: "largest-contentful-paint", buffered: true });
    new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.name === "first-contentful-paint") fcp = e.startTime; }).observe({ type: "paint", buffered: true });
  } catch {}
  const started = Date.now();
  const look = () => (fcp !== null && lcp !== null) || Date.now() - started > 1000 ? resolve({ ttfb, fcp, lcp }) : setTimeout(look, 50);
  requestAnimationFrame(() => requestAnimationFrame(look));
})`;

/** The binding a hidden document reports its INP and CLS to. */
const BINDING = "__edgeloadPageVitals";
/** What the script leaves on the window: gives the document's INP and CLS once, then null. */
const TAKE = "__edgeloadTakeVitals";
/** Whether an interaction of the document has no entry yet (it comes after the next frame is shown). */
const PENDING = "__edgeloadVitalsPending";

const VITALS_SCRIPT = `(() => {
  if (window.${TAKE} || !window.PerformanceObserver) return;
  let cls = 0, session = 0, sessionStart = 0, lastShift = 0, taken = false, started = 0;
  // Interactions begun (a pointer down, a key down): their entries come later, if they last 16 ms.
  addEventListener("pointerdown", () => started++, true);
  addEventListener("keydown", (e) => { if (!e.repeat) started++; }, true);
  const interactions = new Map();
  const shifts = (entries) => {
    for (const e of entries) {
      if (e.hadRecentInput) continue;
      if (session && e.startTime - lastShift < 1000 && e.startTime - sessionStart < 5000) session += e.value;
      else { session = e.value; sessionStart = e.startTime; }
      lastShift = e.startTime;
      cls = Math.max(cls, session);
    }
  };
  const events = (entries) => {
    for (const e of entries) if (e.interactionId) interactions.set(e.interactionId, Math.max(interactions.get(e.interactionId) || 0, e.duration));
  };
  const observers = [];
  try {
    const o = new PerformanceObserver((l) => shifts(l.getEntries()));
    o.observe({ type: "layout-shift", buffered: true });
    observers.push([o, shifts]);
  } catch {}
  try {
    const o = new PerformanceObserver((l) => events(l.getEntries()));
    o.observe({ type: "event", buffered: true, durationThreshold: 16 });
    observers.push([o, events]);
  } catch {}
  const flush = () => { for (const [o, handle] of observers) handle(o.takeRecords()); };
  window.${PENDING} = () => { flush(); return !taken && started > interactions.size; };
  window.${TAKE} = () => {
    if (taken) return null;
    taken = true;
    flush();
    const longest = [...interactions.values()].sort((a, b) => b - a);
    const inp = longest.length ? longest[Math.min(longest.length - 1, Math.floor(longest.length / 50))] : null;
    return { url: location.href, inp, cls };
  };
  const give = () => { const v = window.${TAKE}(); if (v && window.${BINDING}) window.${BINDING}(JSON.stringify(v)); };
  addEventListener("beforeunload", give);
  addEventListener("pagehide", give);
})();`;

/** A document's INP and CLS as the script gives them. */
interface LeftVitals {
  readonly url: string;
  readonly inp: number | null;
  readonly cls: number | null;
}

/** The longest a page's close or navigation waits for an interaction's entry (one shorter than 16 ms never has one). */
const PENDING_WAIT_MS = 250;

type RecordSamples = (samples: readonly Sample[]) => void;

const trends = (vitals: PageVitals, url: string): Sample[] => webVitalSamples(vitals, url).map((s) => ({ type: "trend", ...s }));

/** Only a page with an address of the web has vitals k6 records: not about:blank (setContent). */
const ofTheWeb = (url: string) => /^https?:/.test(url);

/** Makes every document of `context` keep its INP and CLS (VITALS_SCRIPT). */
export async function installVitals(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: VITALS_SCRIPT });
}

/** Records the INP and CLS a document of the page of `cdp` (a session of its own) gives when it is hidden (a CDP binding: the call arrives as the document goes). */
export async function watchVitals(cdp: CDPSession, record: RecordSamples): Promise<void> {
  cdp.on("Runtime.bindingCalled", (event) => {
    if (event.name !== BINDING) return;
    const left = parseLeft(event.payload);
    if (left && ofTheWeb(left.url)) record(trends({ inp: left.inp, cls: left.cls }, left.url));
  });
  await cdp.send("Runtime.enable");
  await cdp.send("Runtime.addBinding", { name: BINDING });
}

function parseLeft(payload: string): LeftVitals | null {
  try {
    return JSON.parse(payload) as LeftVitals;
  } catch {
    return null;
  }
}

/** Records the TTFB, FCP and LCP of the page's last navigation. */
export async function recordNavigationVitals(page: Page, record: RecordSamples): Promise<void> {
  const vitals = (await page.evaluate(VITALS_PROBE).catch(() => null)) as PageVitals | null;
  if (vitals && ofTheWeb(page.url())) record(trends(vitals, page.url()));
}

/**
 * Records the INP and CLS of the page's document now, before the shard navigates or closes it
 * (once: a hidden document gave them already). An interaction's entry comes after the frame
 * that shows its effect: while one has none, the document is given up to PENDING_WAIT_MS.
 */
export async function reportVitals(page: Page, record: RecordSamples): Promise<void> {
  if (page.isClosed()) return;
  const take = `window.${TAKE} ? new Promise((resolve) => {
    const until = Date.now() + ${PENDING_WAIT_MS};
    const look = () => (window.${PENDING}() && Date.now() < until ? setTimeout(look, 20) : resolve(window.${TAKE}()));
    look();
  }) : null`;
  const left = (await page.evaluate(take).catch(() => null)) as LeftVitals | null;
  if (left && ofTheWeb(left.url)) record(trends({ inp: left.inp, cls: left.cls }, left.url));
}
