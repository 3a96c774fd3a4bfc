/**
 * Cron expressions of scheduled runs: the five fields of POSIX crontab (minute hour
 * day-of-month month day-of-week), always in UTC, as Cloudflare Cron Triggers read them.
 *
 * Grammar, per field (IEEE Std 1003.1 `crontab`, with the usual Vixie extensions):
 *
 *   field := item ("," item)*
 *   item  := ("*" | n | n "-" m) ("/" step)?      n..m within the field's range
 *
 * Ranges: minute 0–59, hour 0–23, day-of-month 1–31, month 1–12, day-of-week 0–7 (0 and 7
 * are Sunday). Names (JAN, MON), `L`, `W`, `#` and `?` are not accepted. As in Vixie cron,
 * when both day fields are restricted a day matches either of them; otherwise both.
 *
 * Pure: the time is always passed in (epoch ms).
 *
 * @example
 * const parsed = parseCron("0 3 * * 1-5"); // 03:00 UTC on weekdays
 * if (parsed.ok) nextAfter(parsed.cron, Date.now());
 */
import type { Problem } from "../spec/input-problem.ts";

export interface Cron {
  /** The expression as given (whitespace normalised). */
  readonly source: string;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0–6, Sunday 0 (a 7 in the expression is stored as 0). */
  readonly daysOfWeek: ReadonlySet<number>;
  /** Whether each day field was restricted (not `*`), for the either/both rule. */
  readonly domRestricted: boolean;
  readonly dowRestricted: boolean;
}

export type CronResult = { readonly ok: true; readonly cron: Cron } | { readonly ok: false; readonly problems: readonly Problem[] };

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day-of-week", min: 0, max: 7 },
] as const;

const MINUTE_MS = 60_000;

/** Parses a five-field expression, reporting every bad field at once under `field`. */
export function parseCron(expression: string, field = "cron"): CronResult {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === "")
    return {
      ok: false,
      problems: [{ field, detail: `a cron expression has 5 fields (minute hour day-of-month month day-of-week), got ${parts[0] === "" ? 0 : parts.length}` }],
    };
  const problems: Problem[] = [];
  const sets = FIELDS.map((f, i) => {
    const parsed = parseField(parts[i]!, f.min, f.max);
    if (typeof parsed === "string") problems.push({ field, detail: `${f.name} "${parts[i]}": ${parsed}` });
    return typeof parsed === "string" ? new Set<number>() : parsed;
  });
  if (problems.length) return { ok: false, problems };
  const dow = new Set([...sets[4]!].map((d) => d % 7));
  return {
    ok: true,
    cron: {
      source: parts.join(" "),
      minutes: sets[0]!,
      hours: sets[1]!,
      daysOfMonth: sets[2]!,
      months: sets[3]!,
      daysOfWeek: dow,
      domRestricted: !parts[2]!.startsWith("*"),
      dowRestricted: !parts[4]!.startsWith("*"),
    },
  };
}

/** One field's values, or why it is not one. */
function parseField(text: string, min: number, max: number): Set<number> | string {
  const values = new Set<number>();
  for (const item of text.split(",")) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
    if (!m) return `"${item}" is not *, n, n-m or one of them /step`;
    const from = m[1] === "*" ? min : Number(m[2]);
    const to = m[1] === "*" ? max : m[3] !== undefined ? Number(m[3]) : m[4] !== undefined ? max : from;
    const step = m[4] !== undefined ? Number(m[4]) : 1;
    if (from < min || to > max) return `${item} is outside ${min}-${max}`;
    if (from > to) return `${item} is a range backwards`;
    if (step < 1) return `the step of ${item} must be at least 1`;
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

/** Whether the minute starting at `ms` (UTC) is one of the expression's. */
export function matches(cron: Cron, ms: number): boolean {
  const d = new Date(ms);
  return cron.minutes.has(d.getUTCMinutes()) && cron.hours.has(d.getUTCHours()) && dayMatches(cron, d);
}

function dayMatches(cron: Cron, d: Date): boolean {
  if (!cron.months.has(d.getUTCMonth() + 1)) return false;
  const dom = cron.daysOfMonth.has(d.getUTCDate());
  const dow = cron.daysOfWeek.has(d.getUTCDay());
  // Vixie cron: either day field when both are restricted, else both (one of them is `*`).
  return cron.domRestricted && cron.dowRestricted ? dom || dow : dom && dow;
}

/** Search horizon: an expression such as `0 0 30 2 *` never matches; five years covers every leap rule. */
const HORIZON_MS = 5 * 366 * 24 * 3600_000;

/**
 * The first minute of the expression strictly after `afterMs`, or null when there is none
 * within five years. Skips whole days and hours that cannot match, so it is cheap.
 */
export function nextAfter(cron: Cron, afterMs: number): number | null {
  let t = (Math.floor(afterMs / MINUTE_MS) + 1) * MINUTE_MS;
  const end = afterMs + HORIZON_MS;
  while (t <= end) {
    const d = new Date(t);
    if (!dayMatches(cron, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
      continue;
    }
    if (!cron.hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
      continue;
    }
    if (cron.minutes.has(d.getUTCMinutes())) return t;
    t += MINUTE_MS;
  }
  return null;
}

/** Runs a month at most, for pricing a schedule: the matching minutes in a 30-day span from `fromMs`. */
export function turnsIn(cron: Cron, fromMs: number, spanMs = 30 * 24 * 3600_000): number {
  let n = 0;
  for (let t = nextAfter(cron, fromMs - 1); t !== null && t < fromMs + spanMs; t = nextAfter(cron, t)) n++;
  return n;
}

/** What a schedule costs: one run's estimate times its turns in 30 days from `fromMs`. */
export function schedulePrice(
  cron: Cron,
  usdPerRun: number,
  fromMs: number,
): { readonly usdPerRun: number; readonly turnsPer30Days: number; readonly usdPer30Days: number } {
  const turns = turnsIn(cron, fromMs);
  return { usdPerRun, turnsPer30Days: turns, usdPer30Days: Math.round(usdPerRun * turns * 100) / 100 };
}
