/**
 * The results database of the local state (`.edgeload/state`), read directly with Node's
 * SQLite when no stack is running, so a run made by `npm run demo` can be queried and
 * reported afterwards. Opened read-only; a small adapter gives it the slice of the D1 API
 * that coordinator/store/results-queries.ts uses, so both paths run the same statements.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { SqlReader } from "../coordinator/store/results-queries.ts";
import { CliError } from "./connection.ts";
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

/** The local results database, or the error that says there is neither an API nor local results. */
export function localResultsOrFail(): DatabaseSync {
  const db = openLocalResults();
  if (!db)
    throw new CliError("no API to talk to and no local results in .edgeload/state: run `npm run demo` or `edgeload dev` first, or pass --url and --token");
  return db;
}

/**
 * `read` of run `runId` from the local results, with what it could not read (a stored
 * summary that does not parse, a row SQLite cannot decode) as one error naming the run,
 * never as a missing section or a stack trace. A run that is not there is the caller's
 * to say (exit 104, as the API's 404 is). Pinned by named-api.test.ts.
 */
export async function readLocalRun<T>(runId: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const sqlite = (error as { code?: unknown }).code === "ERR_SQLITE_ERROR";
    if (!(error instanceof SyntaxError) && !sqlite) throw error;
    throw new CliError(`run ${runId} in .edgeload/state cannot be read: ${(error as Error).message}`);
  }
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
