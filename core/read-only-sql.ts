/**
 * Whether a SQL text is one read-only statement, for `edgeload query --sql` and
 * POST /v1/sql. D1 has no read-only connection, so the API accepts only a single SELECT
 * (or WITH … SELECT) and refuses any statement that could write, attach or change
 * settings. String literals, quoted names and comments are blanked out first, so a
 * keyword inside them neither passes nor fails a query.
 */
const WRITING = /\b(insert|update|delete|replace|upsert|drop|alter|create|attach|detach|pragma|vacuum|reindex|analyze|begin|commit|rollback|savepoint|release)\b/i;

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
  if (text.includes(";")) return "one statement at a time";
  if (!/^(select|with|values)\b/i.test(text)) return "only SELECT (or WITH … SELECT) queries are allowed";
  const writing = WRITING.exec(text);
  if (writing) return `read-only queries only: "${writing[1]}" is not allowed`;
  return null;
}
