import { describe, expect, it } from "vitest";
import { boundedSql, readOnlySqlProblem } from "./read-only-sql.ts";

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

  it.each([
    // [query, why it is refused]
    ["SELECT * FROM 'Settings'", "a string stands for a table name in SQLite"],
    ['SELECT value FROM "settings"', "the seed-URL key, quoted"],
    ["SELECT * FROM runs r JOIN settings s", "joined in"],
  ])("refuses %j (%s): those tables hold secrets", (sql) => {
    expect(readOnlySqlProblem(sql)).toMatch(/holds secrets/);
  });

  it("reads schedules and their turns: a schedule's secrets are in its vault, not D1", () => {
    expect(readOnlySqlProblem("SELECT * FROM schedule_turns WHERE schedule_id = ?1")).toBeNull();
    expect(readOnlySqlProblem("SELECT spec_json, webhooks_json FROM schedules")).toBeNull();
  });

  it("bounds a query's rows without changing what it means", () => {
    expect(boundedSql("SELECT * FROM runs -- newest first", 10)).toBe("SELECT * FROM (\nSELECT * FROM runs -- newest first\n) LIMIT 10");
    expect(boundedSql("SELECT 1;", 5)).toBe("SELECT * FROM (\nSELECT 1\n) LIMIT 5");
  });
});
