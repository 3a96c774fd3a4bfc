/**
 * A Durable Object's SQL storage (`ctx.storage.sql`) over node:sqlite, in memory (test
 * support): enough of SqlStorage for the code that keeps its state in SQLite — the flush
 * log (coordinator/merge/flush-log.ts), shard progress (coordinator/merge/child-progress.ts), the
 * aggregator's book (coordinator/aggregator/aggregator-book.ts), the live feed — to run in
 * plain Node, in the scale simulation (scripts/bench/scale-simulation.ts) and its test.
 *
 * Same SQLite, same statements; what differs from the Workers runtime:
 * - one statement per exec (Cloudflare's exec runs several separated by `;`);
 * - the statement runs at once and its rows are read eagerly (Cloudflare's cursor reads
 *   them as it is iterated; the code here always reads them all);
 * - `rowsWritten` is SQLite's change count of an INSERT, UPDATE or DELETE (the rows it
 *   returned, with RETURNING); `rowsRead` is not measured and throws rather than make one up;
 * - no output gates, no storage limits, nothing durable.
 *
 * @example
 * const sql = nodeSqlStorage();
 * const log = new FlushLog(sql.storage);
 * sql.rowsWritten  // → rows written through it so far, every statement counted
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";

type Row = Record<string, SqlStorageValue>;

/** A cursor over rows already read. */
class NodeSqlCursor<T extends Row> {
  readonly columnNames: string[];
  readonly #rows: T[];
  readonly #rowsWritten: number;
  #next = 0;

  constructor(columnNames: string[], rows: T[], rowsWritten: number) {
    this.columnNames = columnNames;
    this.#rows = rows;
    this.#rowsWritten = rowsWritten;
  }

  get rowsWritten(): number {
    return this.#rowsWritten;
  }

  get rowsRead(): number {
    throw new Error("rowsRead is not measured over node:sqlite (SQLite's scan count is not exposed)");
  }

  next(): IteratorResult<T, undefined> {
    return this.#next < this.#rows.length ? { done: false, value: this.#rows[this.#next++]! } : { done: true, value: undefined };
  }

  toArray(): T[] {
    const rest = this.#rows.slice(this.#next);
    this.#next = this.#rows.length;
    return rest;
  }

  one(): T {
    const rest = this.toArray();
    if (rest.length !== 1) throw new Error(`Expected exactly one result from SQL query, but got ${rest.length === 0 ? "no results" : "more than one"}.`);
    return rest[0]!;
  }

  *raw<U extends SqlStorageValue[]>(): IterableIterator<U> {
    for (const row of this.toArray()) yield this.columnNames.map((c) => row[c]) as U;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let r = this.next(); !r.done; r = this.next()) yield r.value;
  }
}

/**
 * The statements that write rows. SQLite's change count is that of the last such statement,
 * so it is read only after one of them (a CREATE TABLE would report the previous INSERT's).
 */
const WRITES = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

export interface NodeSqlStorage {
  readonly storage: SqlStorage;
  /** Rows written through `storage` so far (inserted, updated, deleted). */
  readonly rowsWritten: number;
  close(): void;
}

/** A fresh in-memory database behind a SqlStorage. Statements are prepared once per SQL text. */
export function nodeSqlStorage(): NodeSqlStorage {
  const db = new DatabaseSync(":memory:");
  const prepared = new Map<string, { statement: StatementSync; columns: string[]; writes: boolean }>();
  let rowsWritten = 0;
  const exec = <T extends Row>(query: string, ...bindings: unknown[]): SqlStorageCursor<T> => {
    let entry = prepared.get(query);
    if (!entry) {
      const statement = db.prepare(query);
      entry = { statement, columns: statement.columns().map((c) => c.name), writes: WRITES.test(query) };
      prepared.set(query, entry);
    }
    const params = bindings as Array<null | number | bigint | string | NodeJS.ArrayBufferView>;
    let cursor: NodeSqlCursor<T>;
    if (entry.columns.length === 0) {
      const { changes } = entry.statement.run(...params);
      cursor = new NodeSqlCursor<T>([], [], entry.writes ? Number(changes) : 0);
    } else {
      const rows = entry.statement.all(...params) as T[];
      cursor = new NodeSqlCursor<T>(entry.columns, rows, entry.writes ? rows.length : 0);
    }
    rowsWritten += cursor.rowsWritten;
    return cursor as unknown as SqlStorageCursor<T>;
  };
  const storage = {
    exec,
    get databaseSize(): number {
      const page = db.prepare("PRAGMA page_size").get() as { page_size: number };
      const count = db.prepare("PRAGMA page_count").get() as { page_count: number };
      return page.page_size * count.page_count;
    },
  } as unknown as SqlStorage;
  return {
    storage,
    get rowsWritten() {
      return rowsWritten;
    },
    close: () => db.close(),
  };
}
