/**
 * What a run keeps in storage and for how long, for the storage lines of its cost (issue 49):
 * its D1 rows, kept for the deployment's results retention (RESULTS_RETENTION_DAYS, 90 days
 * by default), and what its Durable Objects hold while it runs (each object's SQLite
 * database, the shards' state and held windows, the receivers' logs), removed at its end.
 * Both are billed per GB-month (core/plan/cloudflare-pricing.ts). Pure.
 *
 * The bytes of a histogram row depend on how widely the values spread: a row holds a
 * `[value_us, count]` pair per occupied bucket (coordinator/migrations/SCHEMA.md), 128 buckets
 * per doubling, so the more samples a row has the more buckets it fills, slowly.
 * histogramRowBytes follows what the real Histogram stores of a target whose latencies are
 * log-normal (median 50 ms, σ 0.5: four in five within 26–95 ms) with the generator's own
 * trends (schedule lag, slot wait, client delay) beside them: 0.8 KB a row of 100 samples,
 * 2.8 KB of 667, 5.6 KB of 5,833, 8.7 KB of 170,000 (storage-usage.test.ts measures it). A
 * shard's row holds three such histograms of its whole run. A target whose latencies spread
 * less stores less (the scale simulation's answers in whole milliseconds, 20–40 and a few
 * 100–139: 0.6 KB a row of 5,833), one that spreads more, more.
 */
import { SECONDS_PER_BILLED_MONTH } from "./cloudflare-pricing.ts";

/** Bytes a GB holds, as storage is billed (decimal: the larger count of GB). */
const BYTES_PER_GB = 1e9;
/** A `windows` row: its key and 15 counters (the simulation wrote 136 bytes), and its index entry. */
const D1_WINDOW_ROW_BYTES = 140 + 60;
/** A `histograms` row without its buckets (key, count, sum, min, max), and its index entry. */
const D1_HISTOGRAM_ROW_BASE_BYTES = 80 + 60;
/** A bucket in a histogram's JSON, `[51234,17],`: 12 bytes on average in the measurement (see the header). */
const BYTES_PER_BUCKET = 13;
/** Occupied buckets of a row of `samples` samples, fitted to the measurement in the header: ~90 more each time the samples grow e-fold. */
const bucketsOf = (samples: number) => Math.max(1, Math.min(samples, 90 * Math.log(Math.max(1, samples)) - 340));
/**
 * A `shards` row without its histograms: its counters, its per-shard summary (~1 KB of
 * figures) and its key. Beside them it holds the shard's whole-run histograms of three
 * trends (duration, waiting, corrected: coordinator/migrations/0003_shard_histograms.sql),
 * whose buckets fill with the shard's requests as a window's do.
 */
const D1_SHARD_ROW_BASE_BYTES = 1_300;
const SHARD_HISTOGRAMS = 3;
/** The summary joined to the run's row at the end: its figures, and a few KB per reporter it lists. */
const SUMMARY_BASE_BYTES = 30_000;
const SUMMARY_BYTES_PER_REPORTER = 2_500;
/** An empty SQLite database: ~12 KB (Durable Objects FAQ, "Does an empty table / SQLite database contribute to my storage?"). */
const EMPTY_OBJECT_BYTES = 12_000;
/** Seconds of its children's windows an aggregator's log holds until a checkpoint trims it. */
const LOGGED_SECONDS = 5;
/**
 * A k6/browser screenshot in R2: a PNG of Browser Run's 1280 × 720 viewport is 100–300 KB
 * (text pages less, photos more); the most of that range.
 */
export const SCREENSHOT_BYTES = 300_000;
/** A `windows_minute` row (as a `windows` row, and its `seconds`). */
const D1_MINUTE_ROW_BYTES = D1_WINDOW_ROW_BYTES + 8;

export interface StorageShape {
  readonly durationS: number;
  /** Seconds the objects are active: the schedule and the end's grace. */
  readonly activeS: number;
  readonly requests: number;
  readonly regions: number;
  readonly steps: number;
  /** D1 rows of windows and histograms the run writes a second (regions × steps × (1 + trends)). */
  readonly d1RowsPerS: number;
  readonly shards: number;
  readonly aggregators: number;
  /** Windows a shard holds before it writes them: 1 in a flat run, WINDOWS_PER_WRITE_IN_A_TREE in a tree. */
  readonly windowsHeldPerShard: number;
  /** Bytes of the run's spec and plan (its D1 row as created); a shard's assignment holds the spec. */
  readonly runRowBytes: number;
  readonly specBytes: number;
  /** Who reports to the coordinator (region roots, else every shard): the summary lists each. */
  readonly reporters: number;
  readonly retentionDays: number;
  /** Screenshots a browser script takes, kept in R2 for the retention. */
  readonly screenshots: number;
}

export interface StorageUsage {
  /** The run's D1 rows: windows, histograms, shard rows and its own row with the summary. */
  readonly d1Bytes: number;
  readonly d1BytesByTable: { readonly windows: number; readonly histograms: number; readonly shards: number; readonly run: number };
  readonly retentionDays: number;
  /** The D1 bytes kept for the retention. */
  readonly d1GbMonths: number;
  /** What the run's Durable Objects hold at most while it runs. */
  readonly durableObjectBytes: number;
  /** That, for the seconds the objects are active. */
  readonly durableObjectGbMonths: number;
  /** Screenshots kept in R2 for the retention, and their bytes (SCREENSHOT_BYTES each). */
  readonly screenshots: number;
  readonly r2Bytes: number;
  readonly r2GbMonths: number;
  /**
   * What D1 keeps of the run once the retention is over, for as long as the deployment lasts:
   * its per-minute rows, its shards' rows without their histograms and its own row
   * (coordinator/store/retained-rows.ts). Not in the estimate, which prices the retention: a
   * month of it is `d1GbPerMonthAfterRetention` GB-months.
   */
  readonly d1BytesAfterRetention: number;
}

/** Bytes of a histogram's buckets of `samples` samples as JSON (see the header). */
function bucketBytes(samples: number): number {
  return Math.ceil(bucketsOf(Math.ceil(samples))) * BYTES_PER_BUCKET;
}

/** Bytes of one histogram row (or one trend of a window on the wire) of `samples` samples, on average over the six trends (see the header). */
export function histogramRowBytes(samples: number): number {
  return D1_HISTOGRAM_ROW_BASE_BYTES + bucketBytes(samples);
}

/** Bytes of a shard's D1 row at the end of a run in which it sent `requests`: its figures and three whole-run histograms. */
export function shardRowBytes(requests: number): number {
  return D1_SHARD_ROW_BASE_BYTES + SHARD_HISTOGRAMS * bucketBytes(requests);
}

/** What a run stores, and for how long (see the header). */
export function storageUsage(s: StorageShape): StorageUsage {
  const rowsPerS = Math.max(1, s.regions * s.steps);
  // A window row and its histograms per region and step each second; a histogram holds that cell's samples.
  const histogramRowsPerS = Math.max(0, s.d1RowsPerS - rowsPerS);
  const histogramBytes = histogramRowBytes(s.requests / Math.max(1, s.durationS) / rowsPerS);
  const d1BytesByTable = {
    windows: s.durationS * rowsPerS * D1_WINDOW_ROW_BYTES,
    histograms: s.durationS * histogramRowsPerS * histogramBytes,
    shards: s.shards * shardRowBytes(s.requests / Math.max(1, s.shards)),
    run: s.runRowBytes + SUMMARY_BASE_BYTES + s.reporters * SUMMARY_BYTES_PER_REPORTER,
  };
  const d1Bytes = d1BytesByTable.windows + d1BytesByTable.histograms + d1BytesByTable.shards + d1BytesByTable.run;
  // A window on the wire holds each step's trends: as many histograms as a second's D1 rows of one region.
  const windowBytes = (histogramRowsPerS / Math.max(1, s.regions)) * histogramBytes;
  // Every shard and aggregator flushes to a receiver, whose log holds its windows until a checkpoint.
  const senders = s.shards + s.aggregators;
  const durableObjectBytes =
    (s.shards + s.aggregators + 1) * EMPTY_OBJECT_BYTES +
    s.shards * (s.specBytes + s.windowsHeldPerShard * windowBytes) +
    senders * LOGGED_SECONDS * windowBytes +
    s.runRowBytes;
  const r2Bytes = s.screenshots * SCREENSHOT_BYTES;
  const retainedMonths = (s.retentionDays * 86_400) / SECONDS_PER_BILLED_MONTH;
  return {
    d1Bytes,
    d1BytesByTable,
    retentionDays: s.retentionDays,
    screenshots: s.screenshots,
    r2Bytes,
    r2GbMonths: (r2Bytes / BYTES_PER_GB) * retainedMonths,
    d1BytesAfterRetention: d1BytesAfterRetention(s, rowsPerS, histogramRowsPerS, d1BytesByTable.run),
    d1GbMonths: (d1Bytes / BYTES_PER_GB) * retainedMonths,
    durableObjectBytes,
    durableObjectGbMonths: (durableObjectBytes / BYTES_PER_GB) * (s.activeS / SECONDS_PER_BILLED_MONTH),
  };
}

/**
 * D1 bytes of a run past the retention: a `windows_minute` row and its `histograms_minute`
 * rows (each holding a minute of its cell's samples) per region and step a minute, a shard's
 * row without its histograms, the run's own row.
 */
function d1BytesAfterRetention(s: StorageShape, rowsPerS: number, histogramRowsPerS: number, runRowBytes: number): number {
  const minutes = Math.ceil(s.durationS / 60);
  const samplesPerMinuteCell = (s.requests / Math.max(1, s.durationS) / rowsPerS) * Math.min(60, s.durationS);
  return (
    minutes * (rowsPerS * D1_MINUTE_ROW_BYTES + histogramRowsPerS * histogramRowBytes(samplesPerMinuteCell)) + s.shards * D1_SHARD_ROW_BASE_BYTES + runRowBytes
  );
}
