/**
 * Attempts to walk around the read-only SQL filter (core/results/read-only-sql.ts), and an
 * oracle that does not share its code: SQLite itself. Each attempt splices comments,
 * quotes, `;`, writing statements, recursive CTEs and calls to refused functions into a legal
 * SELECT at random places. Whatever the filter ACCEPTS is then compiled (never run) by
 * Node's SQLite against the results schema (coordinator/migrations) with an authorizer
 * that notes every action: accepted SQL must be one statement, in the wrapped form the route
 * sends to D1 (boundedSql) and as written, and must only read, and never the settings table.
 *
 * Used by test/support/bad-input-surfaces.ts (hundreds of cases in `npm test`, 10,000 in
 * `npm run bench -- --only fuzz`) and core/results/read-only-sql.fuzz.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { constants, DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { boundedSql } from "../../core/results/read-only-sql.ts";

/** Legal SELECTs over the results schema, the bodies the splices go into. */
export const LEGAL_SELECTS = [
  "SELECT id, status FROM runs WHERE name = ?1",
  "SELECT region, SUM(requests) AS n FROM windows WHERE run_id = ?1 GROUP BY region",
  "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
  "SELECT s.key, SUM(s.value) FROM windows, json_each(windows.statuses_json) s GROUP BY s.key",
  "SELECT CASE WHEN failed > 0 THEN 'bad' ELSE 'ok' END AS verdict FROM windows",
  "SELECT * FROM (SELECT 1 AS a) WHERE a IN (1, 2)",
  "VALUES (1, 'a'), (2, 'b')",
  "SELECT name FROM sqlite_master WHERE type = 'table'",
  "SELECT region, count(*) OVER (PARTITION BY region) AS n FROM windows",
  "SELECT json_extract(summary_json, '$.metrics') AS m FROM runs ORDER BY created_at DESC LIMIT 3",
] as const;

/** What gets spliced in: ways to end a string or comment early, second statements, writes. */
const SPLICES = [
  "'--'",
  "--",
  "--\n",
  "/*",
  "*/",
  "/* ; */",
  "'",
  "''",
  '"',
  "`",
  "[",
  "]",
  "[a;b]",
  ";",
  " ; ",
  "\n",
  "(",
  ")",
  "'';DELETE FROM tripwire;--",
  ") ; DELETE FROM tripwire ; SELECT * FROM (SELECT 1",
  "; DELETE FROM tripwire",
  "; SELECT 1",
  "; VALUES (2)",
  "; UPDATE tripwire SET n = n + 1",
  "; DROP TABLE tripwire",
  "; INSERT INTO tripwire VALUES (9)",
  "; ATTACH ':memory:' AS other",
  "; PRAGMA user_version = 7",
  " RETURNING *",
  "REPLACE INTO tripwire VALUES (3)",
  // At the start, these turn the whole text into one writing statement (the rest commented out).
  "WITH w AS (SELECT 1) DELETE FROM tripwire -- ",
  "WITH w AS (SELECT 1) UPDATE tripwire SET n = 2 -- ",
  "WITH w AS (SELECT 1) INSERT INTO tripwire SELECT * FROM w -- ",
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
  ", (WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3) SELECT count(*) FROM c) AS n",
  ", load_extension('x')",
  ", \"load_extension\"('x')",
  ", randomblob(9)",
  ", (SELECT value FROM settings) AS v",
  " FROM 'settings'",
  ', (SELECT count(*) FROM "sqlite_sequence") AS q',
  ", sqlite_version()",
  " SELECT ",
  " UNION ALL SELECT 1",
  '"DELETE"',
  "$a(')",
  "x'",
  // Harmless where they land between tokens: they keep the query legal, so SQLite compiles it.
  " /* ; DELETE FROM tripwire */ ",
  " -- ; DROP TABLE tripwire\n",
  ", 'x'';DELETE FROM tripwire;--' AS s",
  ", 'a /* b' AS t",
] as const;

/**
 * A legal SELECT with one to three splices, each at the start, at a random character, or
 * at the space after one, between two tokens, where more of the results still compile.
 */
export const walkAroundAttempt: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...LEGAL_SELECTS),
    fc.array(fc.tuple(fc.oneof(fc.constant(0), fc.nat()), fc.boolean(), fc.constantFrom(...SPLICES)), { minLength: 1, maxLength: 3 }),
  )
  .map(([base, splices]) => {
    let sql: string = base;
    for (const [at, betweenTokens, text] of splices) {
      let i = at % (sql.length + 1);
      if (betweenTokens && i > 0) i = sql.indexOf(" ", i) === -1 ? sql.length : sql.indexOf(" ", i);
      sql = sql.slice(0, i) + text + sql.slice(i);
    }
    return sql;
  });

/** An in-memory database with the results schema and a `tripwire` table, for compiling only. */
export function resultsSchemaDatabase(): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  const dir = join(import.meta.dirname, "../../coordinator/migrations");
  const migrations = readdirSync(dir).filter((f) => f.endsWith(".sql"));
  for (const file of migrations.sort()) db.exec(readFileSync(join(dir, file), "utf8"));
  db.exec("CREATE TABLE tripwire (n INTEGER)");
  return db;
}

/**
 * What SQLite says is wrong with running `sql` as the route does (wrapped by boundedSql) or
 * as written: more than one statement, an action other than reading, reading the settings
 * table or SQLite's internal tables, recursion, or a function that loads code or makes blobs.
 * Null when SQLite sees one reading statement, or when its first statement does not compile
 * (then nothing runs). `sql` must be SQL the filter accepted.
 */
export function sqliteObjection(db: DatabaseSync, sql: string): string | null {
  for (const text of [boundedSql(sql, 10), sql]) {
    const objection = objectionTo(db, text);
    if (objection) return `${objection} in ${JSON.stringify(text)}`;
  }
  return null;
}

function objectionTo(db: DatabaseSync, text: string): string | null {
  const actions: string[] = [];
  db.setAuthorizer((code, table, detail) => {
    const objection = actionObjection(code, table, detail);
    if (objection) actions.push(objection);
    return constants.SQLITE_OK;
  });
  try {
    let rest = text;
    for (let statements = 0; rest.length > 0; statements++) {
      let source: string;
      try {
        source = db.prepare(rest).sourceSQL;
      } catch (error) {
        if (/contains no statements/.test((error as Error).message)) break;
        // A first statement that does not compile runs nothing; a later one was still sent.
        return statements === 0 ? null : `SQLite reads a statement after the first (${(error as Error).message})`;
      }
      if (statements === 1) return "SQLite reads a second statement";
      if (actions.length > 0) return actions[0]!;
      if (!rest.startsWith(source)) return `SQLite compiled text that is not the query's: ${JSON.stringify(source)}`;
      rest = rest.slice(source.length);
    }
    return null;
  } finally {
    db.setAuthorizer(null);
  }
}

const ACTION_NAMES = Object.fromEntries(
  Object.entries(constants)
    .filter(([k]) => /^SQLITE_[A-Z_]+$/.test(k) && !/^SQLITE_(OK|DENY|IGNORE|COPY|CHANGESET_.*)$/.test(k))
    .map(([k, v]) => [v, k]),
) as Record<number, string>;

const SQLITE_OWN_READABLE = new Set(["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"]);

/** The authorizer's view: reading is fine except secrets and SQLite's internals; nothing else is. */
function actionObjection(code: number, table: string | null, detail: string | null): string | null {
  if (code === constants.SQLITE_SELECT) return null;
  if (code === constants.SQLITE_READ) {
    const name = (table ?? "").toLowerCase();
    if (name === "settings") return "SQLite reads the settings table";
    if (name.startsWith("sqlite_") && !SQLITE_OWN_READABLE.has(name)) return `SQLite reads its internal table ${name}`;
    return null;
  }
  if (code === constants.SQLITE_FUNCTION) {
    const name = (detail ?? "").toLowerCase();
    return ["load_extension", "randomblob", "zeroblob"].includes(name) || name.startsWith("sqlite_") ? `SQLite calls ${name}()` : null;
  }
  return `SQLite is asked for ${ACTION_NAMES[code] ?? `action ${code}`}${table ? ` on ${table}` : ""}`;
}
