/**
 * Splits a D1 migration file into statements, for coordinator/store/schema.ts, which runs each
 * migration as one D1 batch. Pure, so it is tested in Node beside wrangler's own splitter.
 */
/**
 * A migration file's statements: comments (`-- …`, `/* … *\/`) removed, split at `;`
 * outside quotes. Enough for this folder's plain DDL (no triggers, whose bodies hold `;`);
 * a unit test holds it to wrangler's own splitter on every migration.
 */
export function splitSql(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n") i++;
      current += "\n";
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 1;
      current += " ";
    } else if (c === "'" || c === '"' || c === "`") {
      const end = closingQuote(sql, i);
      current += sql.slice(i, end + 1);
      i = end;
    } else if (c === ";") {
      if (current.trim()) statements.push(current.trim());
      current = "";
    } else {
      current += c;
    }
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}

/** The index of the quote closing the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number): number {
  const quote = sql[start];
  for (let i = start + 1; i < sql.length; i++) {
    if (sql[i] !== quote) continue;
    if (sql[i + 1] === quote) i++;
    else return i;
  }
  return sql.length - 1;
}
