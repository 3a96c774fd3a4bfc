/**
 * How far each shard of a run has got: its watermark (every window below it has been
 * flushed), whether it is done, and its latest telemetry. Each shard has its own row in the
 * coordinator's (or aggregator's) SQLite storage, so a flush never rewrites the run record.
 * The rows live apart from the run record in memory too, so a tick that saves a record it
 * read before an await cannot put a shard's progress back.
 *
 * A row is written when its shard is done, and otherwise at most every PERSIST_EVERY_MS:
 * a flush a second per shard was a row written per shard-second, the price of a second of
 * its storage. What a restart finds behind is harmless — a watermark only rises (the next
 * flush brings it back, and the cut-off never falls below what left, flush-log.ts), and
 * telemetry is the shard's running totals.
 */
import type { ShardTelemetry } from "../../core/run/protocol.ts";

/** How far behind memory a running shard's row may be. */
export const PERSIST_EVERY_MS = 5_000;

/** One sender's progress as the row keeps it: [shard, watermark, done (0|1), telemetry]. */
type StoredProgress = [number, number, 0 | 1, ShardTelemetry | null];

/** One flush's news from a sender: ChildFlush's progress fields. */
export interface ProgressNews {
  readonly childIndex: number;
  readonly watermarkS: number;
  readonly done: boolean;
  readonly telemetry: ShardTelemetry;
}

/**
 * The real shards done under one child: a shard stands for itself once it says done; an
 * aggregator says how many of its shards are done (telemetry.shardsDone), done or not — an
 * aggregator that gave up on silent children still reports done, and counting it as all
 * its shards made a run whose root lost 1,190 of 1,191 shards look whole.
 */
export function shardsDoneUnder(done: boolean, t: ShardTelemetry): number {
  if (t.shards !== undefined) return t.shardsDone ?? 0;
  return done ? 1 : 0;
}

export class ChildProgress {
  readonly #sql: SqlStorage;
  /** When the row was last written (epoch ms). */
  #writtenAt = -Infinity;
  readonly #watermarks = new Map<number, number>();
  readonly #done = new Set<number>();
  readonly #telemetry = new Map<number, ShardTelemetry>();

  /** Opens (or creates) the table and reads back what a previous instance of the object wrote. */
  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS child_progress (one INTEGER PRIMARY KEY CHECK (one = 0), data TEXT NOT NULL)");
    const row = sql.exec<{ data: string }>("SELECT data FROM child_progress").toArray()[0];
    for (const [shard, watermarkS, done, telemetry] of row ? (JSON.parse(row.data) as StoredProgress[]) : []) {
      this.#watermarks.set(shard, watermarkS);
      if (done) this.#done.add(shard);
      if (telemetry) this.#telemetry.set(shard, telemetry);
    }
  }

  /** Starting watermarks: a named scenario's shards measure nothing before its start. */
  start(watermarks: ReadonlyMap<number, number>): void {
    for (const [shard, watermarkS] of watermarks) this.#watermarks.set(shard, watermarkS);
    this.#write(-Infinity); // the first flush's news is written too
  }

  /** One flush's news from a shard, at `nowMs`. Watermarks only move forward; done stays done. */
  record(shard: number, watermarkS: number, done: boolean, telemetry: ShardTelemetry, nowMs: number): void {
    this.recordAll([{ childIndex: shard, watermarkS, done, telemetry }], nowMs);
  }

  /** The news of several flushes (an aggregator's intake), at `nowMs`: the row written at most once. */
  recordAll(news: readonly ProgressNews[], nowMs: number): void {
    let newlyDone = false;
    for (const { childIndex, watermarkS, done, telemetry } of news) {
      this.#watermarks.set(childIndex, Math.max(this.watermark(childIndex), watermarkS));
      this.#telemetry.set(childIndex, telemetry);
      if (done && !this.#done.has(childIndex)) {
        this.#done.add(childIndex);
        newlyDone = true;
      }
    }
    if (newlyDone || !(nowMs - this.#writtenAt < PERSIST_EVERY_MS)) this.#write(nowMs);
  }

  watermark(shard: number): number {
    return this.#watermarks.get(shard) ?? 0;
  }

  isDone(shard: number): boolean {
    return this.#done.has(shard);
  }

  get doneCount(): number {
    return this.#done.size;
  }

  /** The shards that are done, in index order. */
  doneShards(): number[] {
    return [...this.#done].sort((a, b) => a - b);
  }

  telemetry(shard: number): ShardTelemetry | null {
    return this.#telemetry.get(shard) ?? null;
  }

  /** Real shards done, through any aggregators in between (shardsDoneUnder). */
  shardsDone(): number {
    let sum = 0;
    for (const [child, t] of this.#telemetry) sum += shardsDoneUnder(this.#done.has(child), t);
    for (const child of this.#done) if (!this.#telemetry.has(child)) sum += 1;
    return sum;
  }

  /** In-flight peaks summed across shards (each shard's own peak: an upper bound of the run's). */
  peakInFlight(): number {
    let sum = 0;
    for (const t of this.#telemetry.values()) sum += t.peakInFlight;
    return sum;
  }

  #write(nowMs: number): void {
    const rows: StoredProgress[] = [...this.#watermarks].map(([shard, watermarkS]) => [
      shard,
      watermarkS,
      this.#done.has(shard) ? 1 : 0,
      this.#telemetry.get(shard) ?? null,
    ]);
    for (const shard of this.#done) if (!this.#watermarks.has(shard)) rows.push([shard, 0, 1, this.#telemetry.get(shard) ?? null]);
    this.#sql.exec("INSERT INTO child_progress (one, data) VALUES (0, ?) ON CONFLICT (one) DO UPDATE SET data = excluded.data", JSON.stringify(rows));
    this.#writtenAt = nowMs;
  }
}
