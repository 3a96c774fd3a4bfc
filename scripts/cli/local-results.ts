/**
 * The results database of the local state (`.edgeload/state`), read directly with Node's
 * SQLite when no stack is running, so a run made by `npm run demo` can be queried and
 * reported afterwards. Opened read-only; a small adapter gives it the slice of the D1 API
 * that coordinator/store/results-queries.ts uses, so both paths run the same statements.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { SqlReader } from "../../coordinator/store/results-queries.ts";
import { PROJECT_ROOT } from "./paths.ts";

const D1_DIR = join("v3", "d1", "miniflare-D1DatabaseObject");

/** The local results database (the D1 file holding a `windows` table), or null. */
export function openLocalResults(stateDir = join(PROJECT_ROOT, ".edgeload", "state")): DatabaseSync | null {
  const dir = join(stateDir, D1_DIR);
  if (!existsSync(dir)) return null;
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sqlite"))) {
    const db = new DatabaseSync(join(dir, file), { readOnly: true });
    const hasWindows = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'windows'").get();
    if (hasWindows) return db;
    db.close();
  }
  return null;
}

interface Statement {
  bind(...params: unknown[]): Statement;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
}

/** The D1 calls coordinator/store/results-queries.ts makes (prepare/bind/all/batch), over node:sqlite. */
export function asSqlReader(db: DatabaseSync): SqlReader {
  const statement = (sql: string, params: unknown[] = []): Statement => ({
    bind: (...p: unknown[]) => statement(sql, p),
    all: async <T>() => ({ results: db.prepare(sql).all(...(params as never[])) as T[] }),
    first: async <T>() => (db.prepare(sql).get(...(params as never[])) as T | undefined) ?? null,
  });
  return {
    prepare: (sql: string) => statement(sql),
    batch: async (statements: Statement[]) => Promise.all(statements.map((s) => s.all())),
  } as unknown as SqlReader;
}
