/**
 * What a reconciliation of a run with Cloudflare's analytics is made of: the run's side
 * (RunTraffic), the options, one row per wall-clock minute, the findings and the whole
 * result. Its own file because reconcile.ts builds it, findings.ts judges its minutes,
 * reconciliation-text.ts prints it and the reports read it. It also holds the labels the
 * findings and the tables both write (hh:mm, percentages, signed gaps), so a minute reads
 * the same in either.
 */
import type { D1Group, DurableObjectGroup, Quantiles3, WorkerGroup, ZoneLatency } from "./queries.ts";

/** The run's side: when it ran, what it sent each second, and its latency. */
export interface RunTraffic {
  readonly runId: string;
  readonly target: string;
  readonly t0Ms: number;
  readonly endMs: number;
  /** Requests per second since t0 by status class: "2xx" … "5xx", "timeout", "connection". */
  readonly seconds: ReadonlyArray<{ readonly t: number; readonly statusClass: string; readonly requests: number }>;
  /** Client http_req_duration and TTFB (ms) from the run's merged histograms. */
  readonly durationMs: Quantiles3 | null;
  readonly ttfbMs: Quantiles3 | null;
  readonly saturation: readonly string[];
}

export interface ReconcileOptions {
  readonly nowMs: number;
  readonly marginS: number;
  /** Entry Worker script (the one the run's requests reach); defaults to none. */
  readonly entryScript?: string | null;
  /** A count gap is flagged beyond max(absolute, relative × sent). */
  readonly tolerance?: { readonly relative: number; readonly absolute: number };
  /** Client latency is "≫" the server's when above factor × it and more than minGapMs apart. */
  readonly latency?: { readonly factor: number; readonly minGapMs: number };
}

export type FindingKind =
  | "fewer_at_edge"
  | "more_at_edge"
  | "before_worker"
  | "edge_429"
  | "worker_errors"
  | "status_mix"
  | "boundary_shift"
  | "latency"
  | "outside_run"
  | "analytics_lag"
  | "sampled";

export interface Finding {
  readonly kind: FindingKind;
  /** Start of the minute (ISO) the finding is about, or null for the whole run. */
  readonly minute: string | null;
  readonly message: string;
}

export interface MinuteRow {
  readonly minute: string;
  /** Whether the minute overlaps the run (margin minutes are shown, not compared). */
  readonly inRun: boolean;
  readonly sent: number;
  readonly sentByClass: Readonly<Record<string, number>>;
  /** Zone requests (or the entry Worker's invocations without a zone); null without either. */
  readonly edge: number | null;
  readonly edgeByClass: Readonly<Record<string, number>> | null;
  readonly edge429: number;
  readonly worker: number | null;
  readonly workerErrors: number | null;
  /** The entry Worker's wall-time p99 for this minute (Cloudflare's quantile for that one group). */
  readonly workerWallP99Ms: number | null;
  /** The largest Cloudflare sampling interval among this minute's groups (1 = not sampled). */
  readonly sampleInterval: number;
  readonly delta: number | null;
}

export interface Reconciliation {
  readonly runId: string;
  readonly target: string;
  readonly window: { readonly startIso: string; readonly endIso: string; readonly marginS: number };
  /** What the run's counts are compared with. */
  readonly edgeSource: "zone" | "worker" | "none";
  readonly entryScript: string | null;
  readonly minutes: readonly MinuteRow[];
  readonly totals: { readonly sent: number; readonly edge: number | null; readonly worker: number | null };
  readonly latency: {
    readonly client: Quantiles3 | null;
    readonly clientTtfb: Quantiles3 | null;
    /** Per script over the whole window: Cloudflare's quantiles for each script's group. */
    readonly workers: readonly WorkerGroup[];
    readonly zone: ZoneLatency | null;
  };
  readonly workerStatuses: ReadonlyArray<{ readonly script: string; readonly status: string; readonly requests: number; readonly errors: number }>;
  readonly durableObjects: readonly DurableObjectGroup[];
  readonly d1: ReadonlyArray<Omit<D1Group, "minute" | "queryBatchP90Ms">>;
  readonly d1Minutes: readonly D1Group[];
  readonly colos: ReadonlyArray<{ readonly colo: string; readonly count: number }>;
  readonly findings: readonly Finding[];
  readonly unavailable: Readonly<Record<string, string>>;
}

/** A minute's start (ISO) as "hh:mm". */
export const hhmm = (minuteIso: string) => minuteIso.slice(11, 16);
/** `part` as a percentage of `whole`, one decimal. */
export const pct = (part: number, whole: number) => `${((part / whole) * 100).toFixed(1)}%`;
/** A count gap with its sign: "+3", "-2", "0". */
export const signed = (n: number) => (n > 0 ? `+${n}` : String(n));
