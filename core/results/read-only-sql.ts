/**
 * Whether a SQL text is one read-only statement, for `edgeload query --sql` and
 * POST /v1/sql. D1 has no read-only connection, so the API accepts only a single SELECT
 * (or WITH … SELECT) and refuses any statement that could write, attach or change
 * settings. String literals, quoted names and comments are blanked out first, so a
 * keyword inside them neither passes nor fails a query.
 *
 * Recursive CTEs are refused too: `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1
 * FROM c) SELECT count(*) FROM c` never ends, and the results database is shared by every
 * run. The route caps what a query may return with `boundedSql` (a LIMIT around it), so a
 * huge result stops at the cap instead of filling the Worker's memory.
 */
/**
 * The table that holds a secret: `settings` (the generated seed-URL key). A read-only token
 * must not read it. (A schedule's secrets are not in D1 at all: coordinator/schedule/
 * schedule-vault.ts.) Matched on the raw text, strings and quoted names included: SQLite
 * takes `FROM 'settings'` and `FROM "settings"` as the table too.
 */
const SECRET_TABLES = /\bsettings\b/i;

const WRITING =
  /\b(insert|update|delete|replace|upsert|drop|alter|create|attach|detach|pragma|vacuum|reindex|analyze|begin|commit|rollback|savepoint|release)\b/i;

export function readOnlySqlProblem(sql: string): string | null {
  const text = sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/"(?:[^"]|"")*"/g, '""')
    .replace(/`[^`]*`/g, "``")
    .trim()
    .replace(/;\s*$/, "");
  if (!text) return "the query is empty";
  const secret = SECRET_TABLES.exec(sql);
  if (secret) return `the ${secret[0]!.toLowerCase()} table holds secrets and is not readable through SQL`;
  if (text.includes(";")) return "one statement at a time";
  if (!/^(select|with|values)\b/i.test(text)) return "only SELECT (or WITH … SELECT) queries are allowed";
  const writing = WRITING.exec(text);
  if (writing) return `read-only queries only: "${writing[1]}" is not allowed`;
  if (/\brecursive\b/i.test(text)) return "recursive queries are not allowed: one can run without end on the shared results database";
  return null;
}

/**
 * The query with at most `maxRows` rows: SQLite stops producing rows at the outer LIMIT.
 * The newline keeps a trailing `-- comment` from swallowing the closing parenthesis.
 */
export function boundedSql(sql: string, maxRows: number): string {
  return `SELECT * FROM (\n${sql.trim().replace(/;\s*$/, "")}\n) LIMIT ${maxRows}`;
}
