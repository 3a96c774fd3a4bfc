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

export class ChildProgress {
  readonly #sql: SqlStorage;
  /** When each shard's row was last written (epoch ms). */
  readonly #writtenAt = new Map<number, number>();
  readonly #watermarks = new Map<number, number>();
  readonly #done = new Set<number>();
  readonly #telemetry = new Map<number, ShardTelemetry>();

  /** Opens (or creates) the table and reads back what a previous instance of the object wrote. */
  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS shard_progress (shard INTEGER PRIMARY KEY, watermark_s INTEGER NOT NULL, done INTEGER NOT NULL, telemetry TEXT)");
    for (const row of sql.exec<{ shard: number; watermark_s: number; done: number; telemetry: string | null }>("SELECT * FROM shard_progress")) {
      this.#watermarks.set(row.shard, row.watermark_s);
      if (row.done) this.#done.add(row.shard);
      if (row.telemetry) this.#telemetry.set(row.shard, JSON.parse(row.telemetry) as ShardTelemetry);
    }
  }

  /** Starting watermarks: a named scenario's shards measure nothing before its start. */
  start(watermarks: ReadonlyMap<number, number>): void {
    for (const [shard, watermarkS] of watermarks) this.#write(shard, watermarkS, false, null);
  }

  /** One flush's news from a shard, at `nowMs`. Watermarks only move forward; done stays done. */
  record(shard: number, watermarkS: number, done: boolean, telemetry: ShardTelemetry, nowMs: number): void {
    const watermark = Math.max(this.watermark(shard), watermarkS);
    const newlyDone = done && !this.#done.has(shard);
    if (newlyDone || !(nowMs - (this.#writtenAt.get(shard) ?? -Infinity) < PERSIST_EVERY_MS)) {
      this.#write(shard, watermark, done || this.#done.has(shard), telemetry);
      this.#writtenAt.set(shard, nowMs);
      return;
    }
    this.#watermarks.set(shard, watermark);
    this.#telemetry.set(shard, telemetry);
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

  /**
   * Shards done: each reporter done counts the shards it stands for (an aggregator of a
   * run with a tree says how many, telemetry.shards), one still running those of its own
   * that are (telemetry.shardsDone).
   */
  shardsDone(): number {
    let sum = 0;
    for (const [shard, t] of this.#telemetry) sum += this.#done.has(shard) ? (t.shards ?? 1) : (t.shardsDone ?? 0);
    for (const shard of this.#done) if (!this.#telemetry.has(shard)) sum += 1;
    return sum;
  }

  /** In-flight peaks summed across shards (each shard's own peak: an upper bound of the run's). */
  peakInFlight(): number {
    let sum = 0;
    for (const t of this.#telemetry.values()) sum += t.peakInFlight;
    return sum;
  }

  #write(shard: number, watermarkS: number, done: boolean, telemetry: ShardTelemetry | null): void {
    this.#sql.exec(
      "INSERT INTO shard_progress (shard, watermark_s, done, telemetry) VALUES (?, ?, ?, ?) ON CONFLICT (shard) DO UPDATE SET watermark_s = excluded.watermark_s, done = excluded.done, telemetry = excluded.telemetry",
      shard,
      watermarkS,
      done ? 1 : 0,
      telemetry === null ? null : JSON.stringify(telemetry),
    );
    this.#watermarks.set(shard, watermarkS);
    if (done) this.#done.add(shard);
    if (telemetry) this.#telemetry.set(shard, telemetry);
  }
}
