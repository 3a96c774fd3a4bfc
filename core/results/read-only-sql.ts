/**
 * Whether a SQL text is one read-only statement, for `edgeload query --sql` and
 * POST /v1/sql. D1 has no read-only connection, and it runs every statement of a text it is
 * given, so this filter is what keeps a read-only token from writing. It decides on SQLite's
 * own tokens (sql-tokens.ts), read once from left to right, never on a regex over the raw
 * text: `SELECT '--' AS a) ; DELETE FROM runs ; SELECT * FROM (SELECT 1` is a string, a `)`,
 * and a second statement, not a string and a comment.
 *
 * A query passes when all of these hold (read-only-sql.test.ts pins each):
 * - it is one statement (a `;` at the end, then only comments, is allowed), its first word
 *   is SELECT, WITH or VALUES, and its parentheses balance, so `boundedSql`'s wrapper
 *   closes what the query opened and nothing else;
 * - no keyword of a writing statement stands outside a string or quoted name
 *   (sql-read-only-words.ts WRITING_KEYWORDS, RETURNING and INTO included);
 * - every name followed by `(` is a keyword that may be, a function on the allow-list
 *   (READ_ONLY_FUNCTIONS), a CTE's column list or a type's size: `load_extension('x')`,
 *   `randomblob(1e9)` and whatever a SQLite build adds are refused;
 * - no query is recursive: neither the RECURSIVE keyword nor a WITH query that names itself
 *   (SQLite runs `WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) …` without the
 *   keyword), since one can run without end on the results database every run shares;
 * - no token, quoted or not, names the `settings` table (the seed-URL key; a schedule's
 *   secrets are not in D1 at all: coordinator/schedule/schedule-vault.ts). Strings count,
 *   because SQLite takes `FROM 'settings'` as the table; so `WHERE name = 'settings'` is
 *   refused too — simple and safe beats clever here. Likewise SQLite's internal tables other
 *   than the schema, and pragma tables other than the schema-describing ones.
 *
 * The route caps what a query may return with `boundedSql` (a LIMIT around it), so a huge
 * result stops at the cap instead of filling the Worker's memory.
 */
import {
  KEYWORDS_BEFORE_PAREN,
  READABLE_SQLITE_TABLES,
  READ_ONLY_FUNCTIONS,
  READ_ONLY_PRAGMA_TABLES,
  READING_STATEMENTS,
  WRITING_KEYWORDS,
} from "./sql-read-only-words.ts";
import { asciiLower, type SqlToken, tokenizeSql, unquotedName } from "./sql-tokens.ts";

const SECRET_TABLE = "settings";
const RECURSION = "recursive queries are not allowed: one can run without end on the shared results database";

/** What makes `sql` more than one read-only statement, or null when it is one. */
export function readOnlySqlProblem(sql: string): string | null {
  const lexed = tokenizeSql(sql);
  if (!lexed.ok) return lexed.error;
  const tokens = statementTokens(lexed.tokens);
  if (typeof tokens === "string") return tokens;
  const first = tokens[0]!;
  if (first.kind !== "word" || !READING_STATEMENTS.has(asciiLower(first.text))) return "only SELECT (or WITH … SELECT, or VALUES) queries are allowed";
  const closing = matchingParentheses(tokens);
  if (typeof closing === "string") return closing;
  for (let i = 0; i < tokens.length; i++) {
    const problem = nameProblem(tokens, i);
    if (problem) return problem;
  }
  const ctes = commonTableExpressions(tokens, closing);
  if (typeof ctes === "string") return ctes;
  for (const cte of ctes) {
    for (let k = cte.bodyStart; k < cte.bodyEnd; k++)
      if (namesTable(tokens, k) && unquotedName(tokens[k]!) === cte.name)
        return `${RECURSION} (the WITH query "${cte.name}" names itself at ${where(tokens[k]!)})`;
  }
  const columnLists = new Set(ctes.map((c) => c.nameIndex));
  for (let i = 0; i + 1 < tokens.length; i++) {
    if (!isOperator(tokens[i + 1]!, "(") || !isNameLike(tokens[i]!) || columnLists.has(i)) continue;
    const problem = callProblem(tokens, i, closing.get(i + 1)!);
    if (problem) return problem;
  }
  return null;
}

/**
 * The query with at most `maxRows` rows: SQLite stops producing rows at the outer LIMIT.
 * A final `;` (and the comments after it) is cut at its token, never by a pattern that could
 * match inside a comment or string. The newline keeps a trailing `-- comment` from
 * swallowing the closing parenthesis. Only for SQL that readOnlySqlProblem accepted.
 */
export function boundedSql(sql: string, maxRows: number): string {
  const lexed = tokenizeSql(sql);
  if (!lexed.ok) throw new Error(`boundedSql takes a query readOnlySqlProblem accepted: ${lexed.error}`);
  const last = lexed.tokens.at(-1);
  const statement = last && isOperator(last, ";") ? sql.slice(0, last.start) : sql;
  // SQLite's whitespace only: JavaScript's trim() also removes characters SQLite reads as part of a name.
  return `SELECT * FROM (\n${statement.replace(/^[ \t\n\v\f\r\uFEFF]+|[ \t\n\v\f\r]+$/g, "")}\n) LIMIT ${maxRows}`;
}

/** The tokens of the one statement, without its final `;`, or why there is not exactly one. */
function statementTokens(tokens: readonly SqlToken[]): readonly SqlToken[] | string {
  const last = tokens.at(-1);
  const statement = last && isOperator(last, ";") ? tokens.slice(0, -1) : tokens;
  if (statement.length === 0) return "the query is empty";
  const semicolon = statement.find((t) => isOperator(t, ";"));
  if (semicolon) return `one statement at a time: the ";" at ${where(semicolon)} is followed by more SQL (only comments may follow a final ";")`;
  return statement;
}

/** For each `(`'s index, the index of its `)`; or which one is unmatched. */
function matchingParentheses(tokens: readonly SqlToken[]): Map<number, number> | string {
  const closing = new Map<number, number>();
  const open: number[] = [];
  for (const [i, t] of tokens.entries()) {
    if (isOperator(t, "(")) open.push(i);
    if (!isOperator(t, ")")) continue;
    const opener = open.pop();
    if (opener === undefined) return `unbalanced parentheses: the ")" at ${where(t)} closes nothing`;
    closing.set(opener, i);
  }
  if (open.length > 0) return `unbalanced parentheses: the "(" at ${where(tokens[open[0]!]!)} is never closed`;
  return closing;
}

/** A secret or internal table, a writing keyword, or RECURSIVE at token `i`. */
function nameProblem(tokens: readonly SqlToken[], i: number): string | null {
  const token = tokens[i]!;
  if (!isNameLike(token)) return null;
  const name = unquotedName(token);
  if (name === SECRET_TABLE) return `the ${SECRET_TABLE} table holds secrets and is not readable through SQL`;
  if (!namesTable(tokens, i)) return null;
  if (name.startsWith("sqlite_") && !READABLE_SQLITE_TABLES.has(name))
    return `"${name}" is SQLite's own machinery, not results: read-only queries may read sqlite_schema, not other sqlite_ tables or functions`;
  if (name.startsWith("pragma_") && !READ_ONLY_PRAGMA_TABLES.has(name))
    return `"${name}" is not readable through SQL: of the pragma tables only ${[...READ_ONLY_PRAGMA_TABLES].join(", ")} are`;
  if (token.kind !== "word") return null;
  if (name === "recursive") return RECURSION;
  const next = tokens[i + 1];
  const call = next !== undefined && isOperator(next, "(");
  if (WRITING_KEYWORDS.has(name) && !(name === "replace" && call)) return `read-only queries only: "${token.text}" is not allowed`;
  return null;
}

/** Why the name at `i`, followed by the `(` at `i + 1` that `close` closes, may not be called. */
function callProblem(tokens: readonly SqlToken[], i: number, close: number): string | null {
  const token = tokens[i]!;
  const name = unquotedName(token);
  if (token.kind === "word" && KEYWORDS_BEFORE_PAREN.has(name)) return null;
  if (READ_ONLY_FUNCTIONS.has(name)) return null;
  // CAST(x AS DECIMAL(10, 2)): a type's size. `AS name(` is a syntax error anywhere else.
  const inside = tokens.slice(i + 2, close);
  const previous = tokens[i - 1];
  if (previous && previous.kind === "word" && asciiLower(previous.text) === "as" && inside.every((t) => t.kind === "number" || isOperator(t, ",", "+", "-")))
    return null;
  const shown = token.kind === "word" ? `"${token.text}"` : token.text;
  return `${shown} at ${where(token)} is not a function read-only queries may call`;
}

interface CommonTableExpression {
  readonly name: string;
  readonly nameIndex: number;
  /** The tokens of its SELECT, inside its parentheses. */
  readonly bodyStart: number;
  readonly bodyEnd: number;
}

/** Every `WITH name [(columns)] AS [[NOT] MATERIALIZED] (body)` in the statement, at any depth. */
function commonTableExpressions(tokens: readonly SqlToken[], closing: ReadonlyMap<number, number>): CommonTableExpression[] | string {
  const found: CommonTableExpression[] = [];
  const word = (at: number, w: string) => tokens[at]?.kind === "word" && asciiLower(tokens[at]!.text) === w;
  const open = (at: number) => tokens[at] !== undefined && isOperator(tokens[at]!, "(");
  for (let i = 0; i < tokens.length; i++) {
    if (!word(i, "with")) continue;
    let at = i + 1;
    for (;;) {
      const nameIndex = at;
      const malformed = `a WITH clause must read "name AS (SELECT …)": see ${where(tokens[nameIndex] ?? tokens[i]!)}`;
      if (!tokens[at] || !isNameLike(tokens[at]!)) return malformed;
      at++;
      if (open(at)) {
        const columns = tokens.slice(at + 1, closing.get(at));
        if (!columns.every((t, k) => (k % 2 === 0 ? t.kind === "word" || t.kind === "quoted-name" : isOperator(t, ",")))) return malformed;
        at = closing.get(at)! + 1;
      }
      if (!word(at, "as")) return malformed;
      at++;
      if (word(at, "not")) at++;
      if (word(at, "materialized")) at++;
      if (!open(at)) return malformed;
      found.push({ name: unquotedName(tokens[nameIndex]!), nameIndex, bodyStart: at + 1, bodyEnd: closing.get(at)! });
      at = closing.get(at)! + 1;
      if (!tokens[at] || !isOperator(tokens[at]!, ",")) break;
      at++;
    }
  }
  return found;
}

/**
 * Whether token `k` can name a table: any name, and a string where SQLite takes one as a
 * table (after FROM, JOIN, a comma, or a schema's dot: `FROM 'runs'`, `main.'runs'`), so a
 * string in `WHERE name = 'sqlite_sequence'` or `'c' AS label` is just a string.
 */
function namesTable(tokens: readonly SqlToken[], k: number): boolean {
  const token = tokens[k]!;
  if (token.kind !== "string") return isNameLike(token);
  const previous = tokens[k - 1];
  if (!previous) return false;
  const word = previous.kind === "word" ? asciiLower(previous.text) : "";
  return word === "from" || word === "join" || isOperator(previous, ",", ".");
}

/** A token that can name a table, a column or a function in SQLite. */
function isNameLike(token: SqlToken): boolean {
  return token.kind === "word" || token.kind === "quoted-name" || token.kind === "string";
}

function isOperator(token: SqlToken, ...ops: string[]): boolean {
  return token.kind === "operator" && ops.includes(token.text);
}

function where(token: SqlToken): string {
  return `character ${token.start + 1}`;
}
