/**
 * A D1 stand-in that records what the coordinator's statement builders bind (test
 * support): `prepare(sql).bind(...)` keeps the statement, `batch` records the batch and
 * succeeds. For checking what would be written — rows per second, bound parameters per
 * statement — without a database.
 */

/** A statement as bound. */
export interface RecordedStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export interface RecordingD1 {
  readonly db: D1Database;
  /** Every statement bound, batched or not. */
  readonly statements: RecordedStatement[];
}

/** `onBatch` sees each batch as it is sent. */
export function recordingD1(onBatch: (statements: readonly RecordedStatement[]) => void = () => {}): RecordingD1 {
  const statements: RecordedStatement[] = [];
  const db = {
    prepare: (sql: string) => ({
      bind: (...params: unknown[]): RecordedStatement => {
        const statement = { sql, params };
        statements.push(statement);
        return statement;
      },
    }),
    batch: async (batch: readonly RecordedStatement[]) => {
      onBatch(batch);
      return batch.map(() => ({ success: true, results: [], meta: {} }));
    },
  };
  return { db: db as unknown as D1Database, statements };
}

/** Rows a statement writes: a multi-row INSERT's bound values over its column count; 1 for anything else. */
export function rowsOf(statement: RecordedStatement): number {
  const columns = /^\s*INSERT\b[^(]*\(([^)]*)\) VALUES/i.exec(statement.sql)?.[1];
  return columns ? statement.params.length / columns.split(",").length : 1;
}
