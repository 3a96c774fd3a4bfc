/**
 * SQLite's tokenizer, in TypeScript: the text of a query cut into the tokens SQLite itself
 * would see, in one pass from left to right, so the read-only filter (read-only-sql.ts)
 * decides on what SQLite will run and not on a regex's guess. Doing it in one pass is the
 * point: a `--` inside a string is part of the string, a `'` inside a comment is part of the
 * comment, and only the token that starts first decides.
 *
 * It follows `sqlite3GetToken` in SQLite's src/tokenize.c (character classes, quoting, `--`
 * and `/* … *\/` comments, numbers with `_` separators and hex, x'…' blobs, `?NNN`,
 * `:name`, `@name`, `$name` parameters, operators) with two deliberate departures, both
 * towards refusing: what SQLite would turn into a syntax error (an unterminated string,
 * quoted name or comment, a stray character) is an error here with the place it starts, and
 * an unterminated `/*` at the very end is refused too (SQLite reads it as `/` `*`, which
 * the route's wrapper in boundedSql would turn into a comment swallowing its `)`).
 * Whitespace and comments produce no token.
 */

export type SqlTokenKind =
  /** A keyword or an unquoted name: `SELECT`, `run_id`, `count`. */
  | "word"
  /** A quoted name: `"a b"`, `` `a` ``, `[a;b]`. SQLite may also take `"…"` as a string. */
  | "quoted-name"
  /** A string literal `'…'` (`''` inside is one quote). SQLite may take it as a table name. */
  | "string"
  | "blob"
  | "number"
  /** A bound parameter: `?`, `?1`, `:run`, `@run`, `$run`. */
  | "parameter"
  /** Operators and punctuation, `;` included. */
  | "operator";

export interface SqlToken {
  readonly kind: SqlTokenKind;
  /** The token as written. */
  readonly text: string;
  /** Offset of the token's first character in the query. */
  readonly start: number;
}

export type SqlTokens = { readonly ok: true; readonly tokens: readonly SqlToken[] } | { readonly ok: false; readonly error: string };

/**
 * The tokens of `sql`, or what stops SQLite from reading it, naming where.
 *
 *   tokenizeSql("SELECT '--' AS a -- note")  // words SELECT, AS, a; string '--'
 *   tokenizeSql("SELECT 'oops")               // {ok: false, error: "an unterminated string …"}
 */
export function tokenizeSql(sql: string): SqlTokens {
  const tokens: SqlToken[] = [];
  let i = 0;
  while (i < sql.length) {
    const scanned = scanToken(sql, i);
    if (typeof scanned === "string") return { ok: false, error: scanned };
    if (scanned.kind !== null) tokens.push({ kind: scanned.kind, text: sql.slice(i, scanned.end), start: i });
    i = scanned.end;
  }
  return { ok: true, tokens };
}

/**
 * What a name or string token stands for once its quotes are gone, with ASCII letters in
 * lower case: SQLite compares names case-insensitively over ASCII only (sqlite3StrICmp), so
 * `"Settings"`, `[SETTINGS]` and `'settings'` all name the table `settings`.
 */
export function unquotedName(token: SqlToken): string {
  const { text } = token;
  let name = text;
  if (token.kind === "string" || token.kind === "quoted-name") {
    const open = text[0]!;
    const close = open === "[" ? "]" : open;
    name =
      open === "["
        ? text.slice(1, -1)
        : text
            .slice(1, -1)
            .split(close + close)
            .join(close);
  }
  return asciiLower(name);
}

export function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Where one token (or a stretch of whitespace or a comment: kind null) ends, or why it cannot be read. */
type Scanned = { readonly kind: SqlTokenKind | null; readonly end: number } | string;

const OPERATORS = ["->>", "->", "==", "<=", "<>", "<<", ">=", ">>", "!=", "||", "(", ")", ";", "+", "-", "*", "/", "%", "=", "<", ">", ",", "&", "|", "~", "."];

function scanToken(sql: string, i: number): Scanned {
  const c = sql[i]!;
  // SQLite starts whitespace with these four and a space (not \v), then takes any isspace run;
  // a byte-order mark is whitespace where a token would start.
  if (" \t\n\f\r".includes(c)) return { kind: null, end: skipWhile(sql, i + 1, (ch) => " \t\n\v\f\r".includes(ch)) };
  if (c === "\uFEFF") return { kind: null, end: i + 1 };
  if (c === "\0") return `a NUL character at ${where(i)}: SQLite stops reading there`;
  if (sql.startsWith("--", i)) {
    const newline = sql.indexOf("\n", i);
    return { kind: null, end: newline === -1 ? sql.length : newline };
  }
  if (sql.startsWith("/*", i)) {
    const close = sql.indexOf("*/", i + 2);
    if (close === -1) return `an unterminated /* comment at ${where(i)}`;
    return { kind: null, end: close + 2 };
  }
  if (c === "'" || c === '"' || c === "`") return scanQuoted(sql, i, c);
  if (c === "[") {
    const close = sql.indexOf("]", i + 1);
    if (close === -1) return `an unterminated [quoted name] at ${where(i)}`;
    return { kind: "quoted-name", end: close + 1 };
  }
  if (isDigit(c) || (c === "." && isDigit(sql[i + 1]))) return scanNumber(sql, i);
  if ((c === "x" || c === "X") && sql[i + 1] === "'") return scanBlob(sql, i);
  if (c === "?") return { kind: "parameter", end: skipWhile(sql, i + 1, isDigit) };
  if (c === "$" || c === "@" || c === ":" || c === "#") return scanNamedParameter(sql, i);
  if (isWordStart(c)) return { kind: "word", end: skipWhile(sql, i + 1, isIdChar) };
  const operator = OPERATORS.find((op) => sql.startsWith(op, i));
  if (operator) return { kind: "operator", end: i + operator.length };
  return `an unrecognized character ${JSON.stringify(c)} at ${where(i)}`;
}

/** `'…'`, `"…"` or `` `…` ``, a doubled delimiter standing for one. */
function scanQuoted(sql: string, i: number, quote: string): Scanned {
  let j = i + 1;
  for (;;) {
    const close = sql.indexOf(quote, j);
    if (close === -1) {
      const what = quote === "'" ? "string" : `${quote}quoted name${quote}`;
      return `an unterminated ${what} at ${where(i)}: ${excerpt(sql, i)}`;
    }
    if (sql[close + 1] !== quote) return { kind: quote === "'" ? "string" : "quoted-name", end: close + 1 };
    j = close + 2;
  }
}

/** Digits with `_` separators, a fraction and an exponent, or 0x hex; a letter right after is an error in SQLite. */
function scanNumber(sql: string, i: number): Scanned {
  const digitOrSeparator = (ch: string) => isDigit(ch) || ch === "_";
  let j: number;
  if (sql[i] === "0" && (sql[i + 1] === "x" || sql[i + 1] === "X") && isHexDigit(sql[i + 2])) {
    j = skipWhile(sql, i + 2, (ch) => isHexDigit(ch) || ch === "_");
  } else {
    j = skipWhile(sql, i, digitOrSeparator);
    if (sql[j] === ".") j = skipWhile(sql, j + 1, digitOrSeparator);
    const sign = sql[j + 1] === "+" || sql[j + 1] === "-" ? 1 : 0;
    if ((sql[j] === "e" || sql[j] === "E") && isDigit(sql[j + 1 + sign])) j = skipWhile(sql, j + 1 + sign, digitOrSeparator);
  }
  if (isIdChar(sql[j])) return `an unrecognized token ${JSON.stringify(sql.slice(i, skipWhile(sql, j, isIdChar)))} at ${where(i)}`;
  return { kind: "number", end: j };
}

/** x'…': an even number of hex digits. */
function scanBlob(sql: string, i: number): Scanned {
  const j = skipWhile(sql, i + 2, isHexDigit);
  if (sql[j] !== "'" || (j - i - 2) % 2 === 1) return `a malformed blob literal at ${where(i)} (x'…' holds an even number of hex digits)`;
  return { kind: "blob", end: j + 1 };
}

/**
 * `:name`, `@name`, `$name` (and `#name`, which SQLite refuses later). SQLite also reads
 * Tcl-style `$a(…)` and `$a::b`; the parenthesised form can hold `;` and quotes that are then
 * not what they seem, so it is refused: the API binds `?1`, `?2`….
 */
function scanNamedParameter(sql: string, i: number): Scanned {
  let j = i + 1;
  let nameChars = 0;
  for (;;) {
    const from = j;
    j = skipWhile(sql, j, isIdChar);
    nameChars += j - from;
    if (sql.startsWith("::", j)) j += 2;
    else break;
  }
  if (nameChars === 0) return `an unrecognized token ${JSON.stringify(sql[i])} at ${where(i)}`;
  if (sql[j] === "(") return `a parameter name with parentheses at ${where(i)}: bind parameters as ?1, ?2…`;
  return { kind: "parameter", end: j };
}

function skipWhile(sql: string, i: number, ok: (ch: string) => boolean): number {
  let j = i;
  while (j < sql.length && ok(sql[j]!)) j++;
  return j;
}

const isDigit = (ch: string | undefined) => ch !== undefined && ch >= "0" && ch <= "9";
const isHexDigit = (ch: string | undefined) => ch !== undefined && /^[0-9a-fA-F]$/.test(ch);
/** SQLite's IdChar: ASCII letters, digits, `_`, `$`, and every non-ASCII character (any byte ≥ 0x80 in UTF-8). */
const isIdChar = (ch: string | undefined) => ch !== undefined && (/^[A-Za-z0-9_$]$/.test(ch) || ch.charCodeAt(0) >= 0x80);
const isWordStart = (ch: string) => /^[A-Za-z_]$/.test(ch) || ch.charCodeAt(0) >= 0x80;

/** "character 12", counted from 1 as an editor shows it. */
function where(i: number): string {
  return `character ${i + 1}`;
}

function excerpt(sql: string, i: number): string {
  const text = sql.slice(i, i + 24);
  return text.length < sql.length - i ? `${text}…` : text;
}
