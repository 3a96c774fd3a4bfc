/**
 * A k6 script's uncaught errors and console lines as edgeload shows them. The shards count
 * them per window and step (core/metrics/script-output.ts); here they become what a user
 * reads: each window's in the live view (LivePoint.script), which `edgeload run` prints
 * the way k6 prints its log lines and the dashboard lists, and the whole run's in the
 * summary (`edgeload.scriptErrors`) and its text.
 *
 * k6 prints every error and console line. Per second of a run spread over shards that
 * could be thousands, so a window shows its first distinct ones with their counts and says
 * how many more there were: LIVE_ERRORS_SHOWN and LIVE_LOGS_SHOWN per window.
 */
import type { MetricStats } from "../metrics/metric-stats.ts";
import { ScriptOutput, type LogLevel, type ScriptError, type ScriptLog } from "../metrics/script-output.ts";
import type { ShardWindow } from "./protocol.ts";

/** Distinct errors a window prints; the rest are summed into one line. */
export const LIVE_ERRORS_SHOWN = 5;
/** Distinct console lines a window prints. */
export const LIVE_LOGS_SHOWN = 10;

/** One window's script output, as the live view carries it. */
export interface ScriptWindow {
  /** Uncaught errors in the window (every one, shown or not). */
  readonly errors: number;
  /** The first distinct ones, most frequent first. */
  readonly errorSamples: readonly ScriptError[];
  readonly logs: number;
  /** The first distinct console lines, in the order they were printed. */
  readonly logSamples: readonly ScriptLog[];
  /** exec.test.abort()'s message, in the window it was called. */
  readonly aborted: string | null;
}

/** The script output of a window's cells together; null when the script said nothing in it. */
export function scriptWindow(cells: Iterable<MetricStats>): ScriptWindow | null {
  let merged: ScriptOutput | null = null;
  for (const stats of cells) if (stats.hasScript) (merged ??= new ScriptOutput()).merge(stats.script);
  return merged && windowOf(merged);
}

function windowOf(o: ScriptOutput): ScriptWindow {
  return { errors: o.errorCount, errorSamples: o.errors(), logs: o.logCount, logSamples: o.logs(), aborted: o.aborted };
}

/** Back to a mergeable record: the samples, and what was counted past them. */
function outputOf(w: ScriptWindow): ScriptOutput {
  const sum = (xs: readonly { count: number }[]) => xs.reduce((n, x) => n + x.count, 0);
  return new ScriptOutput().mergeWire({
    e: w.errorSamples.map((e) => [e.message, e.at, e.count] as const),
    eo: w.errors - sum(w.errorSamples),
    l: w.logSamples.map((l) => [l.level, l.message, l.vu, l.count] as const),
    lo: w.logs - sum(w.logSamples),
    ...(w.aborted !== null ? { a: w.aborted } : {}),
  });
}

/** A window's script output with a late portion added (see live-view.ts withLatePortion). */
export function withLateScript(earlier: ScriptWindow | undefined, late: ScriptWindow | undefined): ScriptWindow | undefined {
  if (!earlier || !late) return earlier ?? late;
  return windowOf(outputOf(earlier).merge(outputOf(late)));
}

/** The run's uncaught script errors in the summary (`edgeload.scriptErrors`). */
export interface ScriptErrorsSummary {
  /** Every uncaught error: each ended its iteration there, which still counted (as in k6). */
  readonly total: number;
  /** The first distinct messages with where they were thrown, most frequent first. */
  readonly messages: readonly ScriptError[];
}

/** The summary's script errors from the run's merged stats. */
export function scriptErrorsSummary(all: MetricStats): ScriptErrorsSummary {
  if (!all.hasScript) return { total: 0, messages: [] };
  return { total: all.script.errorCount, messages: all.script.errors() };
}

/** The summary text's section, in k6's words; nothing when no iteration threw. */
export function scriptErrorsSection(s: ScriptErrorsSummary | null | undefined): string[] {
  if (!s || s.total === 0) return [];
  const shown = s.messages.reduce((n, m) => n + m.count, 0);
  const rows = [
    ...s.messages.map((m) => [m.message, m.at ?? "-", String(m.count)]),
    ...(s.total > shown ? [["(other errors)", "", String(s.total - shown)]] : []),
  ];
  const header = ["error", "at", "count"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `  ${cells.map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ")}`.trimEnd();
  return [`  SCRIPT ERRORS (${s.total} uncaught; each ended its iteration, which still counts, as in k6)`, line(header), ...rows.map(line), ""];
}

/** k6's level tags on a terminal (logrus' four letters). */
const LEVEL_TAG: Readonly<Record<LogLevel, string>> = { debug: "DEBU", info: "INFO", warning: "WARN", error: "ERRO" };

/**
 * What `edgeload run` prints for one window, as k6 prints log lines on a terminal
 * (`ERRO[0003] message`, the time in seconds since the run's start): the first distinct
 * errors and console lines with their counts, then how many more there were.
 *
 * @example
 * scriptLines(3, { errors: 12, errorSamples: [{ message: "TypeError: x is undefined", at: "test.js:8", count: 12 }], logs: 0, logSamples: [], aborted: null })
 * // → ["ERRO[0003] TypeError: x is undefined  at=test.js:8 source=stacktrace ×12"]
 */
export function scriptLines(windowS: number, w: ScriptWindow): string[] {
  const time = `[${String(windowS).padStart(4, "0")}]`;
  const times = (n: number) => (n > 1 ? ` ×${n}` : "");
  const out: string[] = [];
  for (const l of w.logSamples.slice(0, LIVE_LOGS_SHOWN)) out.push(`${LEVEL_TAG[l.level]}${time} ${l.message}  source=console vu=${l.vu}${times(l.count)}`);
  const logsShown = w.logSamples.slice(0, LIVE_LOGS_SHOWN).reduce((n, l) => n + l.count, 0);
  if (w.logs > logsShown) out.push(`INFO${time} … and ${w.logs - logsShown} more console lines in this second`);
  for (const e of w.errorSamples.slice(0, LIVE_ERRORS_SHOWN)) {
    out.push(`ERRO${time} ${e.message}  ${e.at ? `at=${e.at} ` : ""}source=stacktrace${times(e.count)}`);
  }
  const errorsShown = w.errorSamples.slice(0, LIVE_ERRORS_SHOWN).reduce((n, e) => n + e.count, 0);
  if (w.errors > errorsShown) out.push(`ERRO${time} … and ${w.errors - errorsShown} more uncaught errors in this second`);
  if (w.aborted !== null) out.push(`ERRO${time} test aborted: ${w.aborted}`);
  return out;
}

/**
 * The exec.test.abort() message a flush carries, if any (null: none): the coordinator stops
 * the run when one arrives (k6's ScriptAborted).
 */
export function scriptAbortIn(windows: readonly ShardWindow[]): string | null {
  for (const window of windows) {
    for (const [, stats] of window.steps) if (stats.y?.a !== undefined) return stats.y.a;
  }
  return null;
}

/** The reason a run its script aborted ends with. */
export const scriptAbortReason = (message: string) => (message ? `script aborted: ${message}` : "script aborted");

/**
 * The exec.test.fail() message a flush carries, if any (null: none): the coordinator keeps
 * the first, lets the run go on, and ends it failed (k6's MarkedAsFailed, exit 110).
 */
export function scriptFailIn(windows: readonly ShardWindow[]): string | null {
  for (const window of windows) {
    for (const [, stats] of window.steps) if (stats.y?.f !== undefined) return stats.y.f;
  }
  return null;
}

/** The reason a run its script marked failed ends with (k6 logs `test marked as failed: …`). */
export const scriptFailReason = (message: string) => (message ? `marked failed by the script: ${message}` : "marked failed by the script");
