import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resultsSchemaDatabase } from "../../test/support/sql-walk-arounds.ts";
import { boundedSql, readOnlySqlProblem } from "./read-only-sql.ts";

const ROOT = join(import.meta.dirname, "../..");
/** The results schema in Node's SQLite: an accepted query must also be one SQLite compiles. */
const db = resultsSchemaDatabase();

describe("readOnlySqlProblem", () => {
  it("accepts one SELECT or WITH … SELECT, with keywords inside strings, names and comments", () => {
    for (const sql of [
      "SELECT * FROM windows WHERE run_id = ?1;",
      "WITH t AS (SELECT 1) SELECT * FROM t",
      "SELECT 'drop table; delete' AS text -- update me\nFROM runs",
      'SELECT "update" FROM runs /* insert */',
    ])
      expect(readOnlySqlProblem(sql), sql).toBeNull();
  });

  it("refuses writes, several statements, pragmas and attachments, saying why", () => {
    expect(readOnlySqlProblem("DELETE FROM runs")).toMatch(/only SELECT/);
    expect(readOnlySqlProblem("SELECT 1; SELECT 2")).toMatch(/one statement/);
    expect(readOnlySqlProblem("WITH x AS (SELECT 1) INSERT INTO runs SELECT * FROM x")).toMatch(/"INSERT" is not allowed/);
    expect(readOnlySqlProblem("SELECT * FROM pragma_table_info('runs')")).toBeNull(); // a table-valued function: reads only
    expect(readOnlySqlProblem("  ")).toMatch(/empty/);
    expect(readOnlySqlProblem("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")).toMatch(
      /recursive queries are not allowed/,
    );
    expect(readOnlySqlProblem("SELECT 'with recursive' AS text")).toBeNull(); // inside a string: not a keyword
  });

  it("refuses both walk-arounds of issue 48: a -- inside a string hid what followed it", () => {
    // The old filter stripped `--` to the end of the line before it blanked strings, so the
    // rest of each query was never looked at.
    expect(readOnlySqlProblem("SELECT '--' AS a, (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c)")).toMatch(
      /recursive queries are not allowed/,
    );
    // Wrapped by boundedSql, the parentheses balance and D1 would run the DELETE.
    expect(readOnlySqlProblem("SELECT '--' AS a) ; DELETE FROM runs ; SELECT * FROM (SELECT 1")).toMatch(/one statement at a time: the ";" at character 19/);
  });

  it.each<[string, RegExp | null, string]>([
    // [query, null when accepted or what the refusal says, what the row shows]
    ["SELECT 'it''s -- not a comment' AS a", null, "a comment marker inside a string with an escaped quote"],
    ["SELECT 1 /* it's ; a 'comment */ AS a", null, "quotes and ; inside a comment"],
    ["SELECT 1 AS a /* ; */", null, "a ; inside a comment ends nothing"],
    ["SELECT '';DELETE FROM runs", /one statement at a time/, "an empty string, then a second statement"],
    ["SELECT ';' AS s; DELETE FROM runs", /the ";" at character 16/, "the ; inside the string is skipped, the real one found"],
    ['SELECT 1 AS "a--b", 2 AS `c/*d`', null, "comment markers inside quoted names"],
    ["SELECT 1 AS [a;b]", null, "a ; inside a [quoted name]"],
    ["SELECT 'oops", /unterminated string at character 8/, "an unterminated string"],
    ["SELECT 1 /* to the end", /unterminated \/\* comment/, "an unterminated comment: it would swallow the wrapper's )"],
    ['SELECT "oops', /unterminated "quoted name"/, "an unterminated quoted name"],
    ["SELECT 1 AS n; -- note", null, "a final ; followed by a comment"],
    ["SELECT 1 AS n ; /* a */ -- b\n", null, "a final ; followed by two comments"],
    ["SELECT 1;;", /one statement at a time/, "an empty second statement"],
    ["SELECT load_extension('x')", /"load_extension" at character 8 is not a function read-only queries may call/, "loads native code"],
    ["SELECT \"load_extension\"('x')", /"load_extension" at character 8 is not a function/, "SQLite calls a quoted name too"],
    ["SELECT randomblob(2000000000)", /"randomblob" .* not a function/, "a blob as large as asked"],
    ["SELECT nosuch(1)", /"nosuch" .* not a function/, "a function not on the list"],
    ["SELECT sqlite_compileoption_get(0)", /SQLite's own machinery/, "what the build is, not results"],
    ["SELECT * FROM sqlite_dbpage", /SQLite's own machinery/, "raw pages, the secret among them"],
    ["SELECT * FROM pragma_compile_options", /pragma_compile_options" is not readable/, "a pragma table used without parentheses"],
    ["SELECT 1 RETURNING *", /"RETURNING" is not allowed/, "RETURNING belongs to writes"],
    ["REPLACE INTO runs (id) VALUES ('x')", /only SELECT/, "REPLACE as a statement"],
    ["WITH t AS (SELECT 1) REPLACE INTO runs (id) VALUES ('x')", /"REPLACE" is not allowed/, "REPLACE after a WITH"],
    ["SELECT replace(name, 'a', 'b') AS n FROM runs", null, "replace() the string function"],
    ["WITH t(a, b) AS (SELECT 1, 2) SELECT a + b AS s FROM t", null, "a CTE with a column list, not recursive"],
    ["WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", /the WITH query "c" names itself/, "recursive without RECURSIVE"],
    ["WITH c AS (SELECT 1 AS x UNION ALL SELECT x + 1 FROM 'C') SELECT 1", /names itself/, "names itself in a string, other case"],
    ["WITH c AS (SELECT 'c' AS label) SELECT label FROM c", null, "a string value equal to the CTE's name"],
    ["SELECT region, SUM(requests) OVER (PARTITION BY region ORDER BY window_s) AS n FROM windows", null, "a window function"],
    ["SELECT json_extract(summary_json, '$.metrics.http_reqs.count') AS n FROM runs", null, "json_extract"],
    ["SELECT CASE WHEN failed > 0 THEN 'bad' ELSE 'ok' END AS v FROM windows", null, "CASE"],
    ["SELECT * FROM (SELECT id FROM runs) r WHERE r.id IN (SELECT run_id FROM windows)", null, "subqueries and IN (…)"],
    ["SELECT id FROM runs WHERE name LIKE 'a!%b' ESCAPE '!'", null, "LIKE with ESCAPE"],
    ["SELECT CAST(1.5 AS DECIMAL(10, 2)) AS d", null, "a type with a size in CAST"],
    ["SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'", null, "the schema, and a LIKE pattern that is no name"],
    ["SELECT * FROM 'sqlite_sequence'", /SQLite's own machinery/, "a string standing for an internal table"],
    ["SELECT 1)", /the "\)" at character 9 closes nothing/, "a ) that would close the wrapper's ("],
    ["SELECT (1", /the "\(" at character 8 is never closed/, "a ( the wrapper would close"],
    ["EXPLAIN SELECT 1", /only SELECT/, "the first word decides"],
  ])("%j", (sql, expected) => {
    const problem = readOnlySqlProblem(sql);
    if (expected === null) {
      expect(problem).toBeNull();
      expect(() => db.prepare(boundedSql(sql, 10))).not.toThrow();
    } else expect(problem).toMatch(expected);
  });

  it.each([
    // [query, why it is refused]
    ["SELECT * FROM 'Settings'", "a string stands for a table name in SQLite"],
    ['SELECT value FROM "settings"', "the seed-URL key, quoted"],
    ["SELECT value FROM [SETTINGS]", "bracketed, upper case"],
    ["SELECT value FROM main.`settings`", "backticks, with the schema"],
    ["SELECT * FROM runs r JOIN settings s", "joined in"],
    ["SELECT * FROM sqlite_schema WHERE name = 'settings'", "even as a plain value: simple beats clever"],
  ])("refuses %j (%s): that table holds secrets", (sql) => {
    expect(readOnlySqlProblem(sql)).toMatch(/holds secrets/);
  });

  it("reads schedules and their turns: a schedule's secrets are in its vault, not D1", () => {
    expect(readOnlySqlProblem("SELECT * FROM schedule_turns WHERE schedule_id = ?1")).toBeNull();
    expect(readOnlySqlProblem("SELECT spec_json, webhooks_json FROM schedules")).toBeNull();
  });

  it("accepts every query the documentation shows, and SQLite compiles each", () => {
    const docs = ["QUERIES.md", "coordinator/migrations/SCHEMA.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)];
    const queries = docs
      .filter((f) => f.endsWith(".md"))
      .flatMap((f) => [...readFileSync(join(ROOT, f), "utf8").matchAll(/```sql[^\n]*\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split(/;\s*\n\s*\n/)))
      .filter((q) => q.trim());
    expect(queries.length).toBeGreaterThanOrEqual(14); // QUERIES.md has 7 blocks, SCHEMA.md 8 queries
    for (const sql of queries) {
      expect(readOnlySqlProblem(sql), sql).toBeNull();
      expect(() => db.prepare(boundedSql(sql, 10)), sql).not.toThrow();
    }
  });

  it("accepts the queries the CLI, benches and tests send to POST /v1/sql", () => {
    for (const sql of [
      "SELECT window_s, t_ms, name, labels, value FROM series\n  WHERE run_id = ?1 AND (?2 IS NULL OR name = ?2) ORDER BY name, labels, t_ms",
      "SELECT window_s AS second, step, SUM(sent) AS sent, SUM(connection_errors) AS connection_errors, SUM(timeouts) AS timeouts FROM windows WHERE run_id = ?1 GROUP BY window_s, step",
      "SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(dropped), 0) AS dropped FROM windows WHERE run_id = ?1",
      "SELECT (SELECT COUNT(*) FROM windows WHERE run_id = ?1) + (SELECT COUNT(*) FROM histograms WHERE run_id = ?1) AS rows, (SELECT COUNT(DISTINCT window_s) FROM windows WHERE run_id = ?1) AS seconds",
      "SELECT window_s AS t, MAX(max_us) / 1000.0 AS max_ms FROM histograms WHERE run_id = ? AND metric = 'client_delay' GROUP BY window_s",
      "SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'runs'",
      "SELECT r.id, r.status, s.colo FROM runs r JOIN shards s ON s.run_id = r.id",
      `SELECT a.column1 AS a, b.column1 AS b FROM (VALUES (1),(2)) a, (VALUES (1),(2)) b -- every pair`,
    ])
      expect(readOnlySqlProblem(sql), sql).toBeNull();
  });
});

describe("boundedSql", () => {
  it("bounds a query's rows without changing what it means", () => {
    expect(boundedSql("SELECT * FROM runs -- newest first", 10)).toBe("SELECT * FROM (\nSELECT * FROM runs -- newest first\n) LIMIT 10");
    expect(boundedSql("SELECT 1;", 5)).toBe("SELECT * FROM (\nSELECT 1\n) LIMIT 5");
  });

  it("cuts the final ; at its token, with the comments after it, and never a ; inside a string or comment", () => {
    expect(boundedSql("SELECT 1 AS n; -- note", 5)).toBe("SELECT * FROM (\nSELECT 1 AS n\n) LIMIT 5");
    expect(boundedSql("SELECT ';' AS s /* ; */", 5)).toBe("SELECT * FROM (\nSELECT ';' AS s /* ; */\n) LIMIT 5");
    expect(boundedSql("SELECT 1 AS n -- ;\n", 5)).toBe("SELECT * FROM (\nSELECT 1 AS n -- ;\n) LIMIT 5");
  });

  it("keeps a character SQLite reads as part of a name, where trim() would cut it", () => {
    // U+3000 is whitespace to JavaScript, part of an identifier to SQLite.
    expect(boundedSql("SELECT 1 AS n\u3000", 5)).toBe("SELECT * FROM (\nSELECT 1 AS n\u3000\n) LIMIT 5");
  });

  it("throws on SQL the filter refuses to read, instead of wrapping a comment around its own )", () => {
    expect(() => boundedSql("SELECT 1 /* open", 5)).toThrow(/unterminated \/\* comment/);
  });
});
