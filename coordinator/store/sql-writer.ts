/**
 * What the retention sweeps need of a database, and the SQL they share: D1 itself in the
 * Worker, node:sqlite in the unit tests (results-retention.ts, retained-rows.ts).
 */

/** Anything D1Database-like: D1 itself, or node:sqlite in the unit test. */
export interface SqlWriter {
  prepare(sql: string): SqlBound;
  batch(statements: SqlBound[]): Promise<unknown[]>;
}
interface SqlBound {
  bind(...params: unknown[]): SqlBound;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
}

/** The first second of the minute `x` (seconds since t0) falls in, in SQL: a floor, also below 0 (as core/results/retention.ts minuteOf). */
export const minute = (x: string) => `(${x} - ((${x} % 60) + 60) % 60)`;
