/**
 * The browsers of a run's k6/browser scenarios (`options.scenarios[].options.browser.type:
 * 'chromium'`): how many Browser Run sessions and when each starts (what they cost and the
 * account limits they meet: browser-plan.ts). Apart from the pricing, so that the shard
 * assignments can take their starts without depending on the cost model. A shard owns one session for the whole run and opens a context
 * per iteration in it (workers/shard/browser-session.ts), so a scenario has one browser per
 * shard that gets a VU, holding the contexts of that shard's VUs; the session is acquired at
 * the shard's first iteration and closed at its last alarm.
 *
 * Browser Run allows an account one new browser a second (BROWSER_RUN_LIMITS): shards that
 * would all start at t0 are spread (spreadBrowserStarts), each starting its session at least
 * a second after the one before, and billed from then; each shard is told its start
 * (browserStartsByShard, into its assignment) and acquires its session no earlier. A
 * scenario drives a browser when its script spec says so (`script.browser`, set from the
 * k6 options), so the CLI's plan, the API's plan and the maxCost check all price it alike.
 */
import type { RunSpec } from "../spec/types.ts";
import { VuSchedule } from "../schedule/vu-schedule.ts";
import type { Plan } from "./plan.ts";
import { BROWSER_RUN_LIMITS } from "./platform-limits.ts";

/**
 * Most VUs (each an open context with its page) one browser session should hold. Browser Run
 * documents no memory per session or per context; its limits page advises tabs in a shared
 * browser over more browsers. The assumption: a session is one Chromium of about 2 GB, and a
 * context with one page of a sign-in or app page takes 100–200 MB of renderer memory, so ten
 * leave headroom for the browser process itself. Above it, give the scenario more shards.
 */
export const VUS_PER_BROWSER = 10;

/** One shard's Browser Run session. */
export interface BrowserSession {
  readonly scenario: string;
  /** The run's shard index. */
  readonly shard: number;
  /** When the shard's first VU starts (ms after t0): when it would acquire its session. */
  readonly wantedAtMs: number;
  /** When it acquires it, spread to the account's new-browser rate. */
  readonly startsAtMs: number;
  /** When the scenario ends and the session is closed. */
  readonly endsAtMs: number;
  /** The shard's VUs: contexts open in the session at once. */
  readonly vus: number;
}

export interface BrowserPlan {
  readonly sessions: readonly BrowserSession[];
  readonly peakConcurrent: number;
  readonly browserHours: number;
  /** The most sessions acquired in any one second (any window of 1,000 ms). */
  readonly mostNewPerS: number;
  readonly mostVusPerBrowser: number;
  /** The scenario's shard count that keeps it within VUS_PER_BROWSER, for the note. */
  readonly shardsNeeded: number;
}

/**
 * The names of a run's scenarios whose VUs drive a browser (`script.browser`, from k6's
 * `options.browser.type: "chromium"`); a run without named scenarios is "default".
 */
export function browserScenariosOf(spec: RunSpec): string[] {
  if (!spec.scenarios?.length) return spec.script?.browser ? ["default"] : [];
  return spec.scenarios.filter((s) => s.spec.script?.browser).map((s) => s.name);
}

/**
 * Each start moved no earlier than wanted and at least 1000 / newPerS ms after the previous
 * start (in the order wanted), so any second holds at most `newPerS` starts: Browser Run
 * enforces its new-browser limit as a fill rate, refusing a burst. Returned in input order.
 * @example spreadBrowserStarts([0, 0, 0], 1) // [0, 1000, 2000]
 */
export function spreadBrowserStarts(wantedMs: readonly number[], newPerS: number): number[] {
  if (!(newPerS > 0)) throw new RangeError(`new browsers per second must be above 0, got ${newPerS}`);
  const gapMs = 1000 / newPerS;
  const order = wantedMs.map((_, i) => i).sort((a, b) => wantedMs[a]! - wantedMs[b]! || a - b);
  const starts = new Array<number>(wantedMs.length);
  const sorted: number[] = [];
  for (const i of order) {
    const k = sorted.length;
    // The gap spreads them; the window bound keeps a sum of fractional gaps from rounding under a second.
    const start = Math.max(wantedMs[i]!, (sorted[k - 1] ?? -Infinity) + gapMs, (sorted[k - newPerS] ?? -Infinity) + 1000);
    sorted.push(start);
    starts[i] = start;
  }
  return starts;
}

/** A browser scenario as planned: its spec, its plan, where it starts and its first shard. */
interface BrowserPart {
  readonly name: string;
  readonly startMs: number;
  readonly firstShard: number;
  readonly spec: RunSpec;
  readonly plan: Plan;
}

/** The browser scenarios of a planned run (a run of one scenario is one when any name is given). */
function browserParts(spec: RunSpec, plan: Plan, names: readonly string[]): BrowserPart[] {
  if (!spec.scenarios?.length) return names.length ? [{ name: names[0]!, startMs: 0, firstShard: 0, spec, plan }] : [];
  return (plan.scenarios ?? [])
    .filter((s) => names.includes(s.name))
    .map((s) => ({ name: s.name, startMs: s.startMs, firstShard: s.firstShard, spec: spec.scenarios!.find((n) => n.name === s.name)!.spec, plan: s.plan }));
}

/**
 * When each shard of a part gets its first VU. VUs are dealt to equal-weight shards in turn
 * (core/schedule/vu-schedule.ts ShardVus), so shard i's first is global VU i: it starts when
 * the ramp first has more than i active. An arrival-rate scenario's shards start at once.
 */
function firstVuAtMs(part: BrowserPart): Array<{ shard: number; atMs: number; vus: number }> {
  // The weights, not the shards: an aggregator's plan has its subtree's shards only (subtreeStart).
  const shards = part.plan.weights.length;
  const schedule = part.spec.vus ? new VuSchedule(part.spec.vus) : null;
  const peak = schedule ? schedule.peak : part.spec.maxInFlight;
  const out: Array<{ shard: number; atMs: number; vus: number }> = [];
  for (let i = 0; i < Math.min(shards, peak); i++) {
    let t = 0;
    while (schedule && t < schedule.durationMs && schedule.activeAt(t) <= i) t = schedule.nextChangeAfter(t);
    if (schedule && t >= schedule.durationMs) continue;
    out.push({ shard: part.firstShard + i, atMs: part.startMs + t, vus: Math.floor(peak / shards) + (i < peak % shards ? 1 : 0) });
  }
  return out;
}

/**
 * When each shard of a browser scenario may acquire its session: ms after the run's t0, by
 * the run's shard index (a named scenario's `firstShard` + its own). Shards without a VU, and
 * every shard of a run without browsers, are absent.
 */
export function browserStartsByShard(spec: RunSpec, plan: Plan): ReadonlyMap<number, number> {
  const names = browserScenariosOf(spec);
  if (!names.length) return new Map();
  return new Map(planBrowsers(spec, plan, names).sessions.map((s) => [s.shard, s.startsAtMs]));
}

/** The sessions of the browser scenarios of a planned run (by default the spec's), spread to the account's new-browser rate. */
export function planBrowsers(spec: RunSpec, plan: Plan, names: readonly string[] = browserScenariosOf(spec)): BrowserPlan {
  const parts = browserParts(spec, plan, names);
  const wanted = parts.flatMap((part) => firstVuAtMs(part).map((w) => ({ ...w, part })));
  const starts = spreadBrowserStarts(
    wanted.map((w) => w.atMs),
    BROWSER_RUN_LIMITS.newBrowsersPerS,
  );
  const sessions = wanted.map((w, i) => {
    const endsAtMs = w.part.startMs + w.part.spec.durationMs;
    return { scenario: w.part.name, shard: w.shard, wantedAtMs: w.atMs, startsAtMs: Math.min(starts[i]!, endsAtMs), endsAtMs, vus: w.vus };
  });
  const openAt = (t: number) => sessions.filter((s) => s.startsAtMs <= t && t < s.endsAtMs).length;
  const inSecondFrom = (t: number) => sessions.filter((s) => s.startsAtMs >= t && s.startsAtMs < t + 1000).length;
  const peakVus = (p: BrowserPart) => (p.spec.vus ? new VuSchedule(p.spec.vus).peak : p.spec.maxInFlight);
  return {
    sessions,
    peakConcurrent: Math.max(0, ...sessions.map((s) => openAt(s.startsAtMs))),
    browserHours: sessions.reduce((a, s) => a + (s.endsAtMs - s.startsAtMs), 0) / 3_600_000,
    mostNewPerS: Math.max(0, ...sessions.map((s) => inSecondFrom(s.startsAtMs))),
    mostVusPerBrowser: Math.max(0, ...sessions.map((s) => s.vus)),
    shardsNeeded: Math.max(0, ...parts.map((p) => Math.ceil(peakVus(p) / VUS_PER_BROWSER))),
  };
}
