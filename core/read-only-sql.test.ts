import { describe, expect, it } from "vitest";
import { readOnlySqlProblem } from "./read-only-sql.ts";

describe("readOnlySqlProblem", () => {
  it("accepts one SELECT or WITH … SELECT, with keywords inside strings, names and comments", () => {
    for (const sql of [
      "SELECT * FROM windows WHERE run_id = ?1;",
      "WITH t AS (SELECT 1) SELECT * FROM t",
      "SELECT 'drop table; delete' AS text -- update me\nFROM runs",
      'SELECT "update" FROM runs /* insert */',
    ]) expect(readOnlySqlProblem(sql), sql).toBeNull();
  });

  it("refuses writes, several statements, pragmas and attachments, saying why", () => {
    expect(readOnlySqlProblem("DELETE FROM runs")).toMatch(/only SELECT/);
    expect(readOnlySqlProblem("SELECT 1; SELECT 2")).toMatch(/one statement/);
    expect(readOnlySqlProblem("WITH x AS (SELECT 1) INSERT INTO runs SELECT * FROM x")).toMatch(/"INSERT" is not allowed/);
    expect(readOnlySqlProblem("SELECT * FROM pragma_table_info('runs')")).toBeNull(); // a table-valued function: reads only
    expect(readOnlySqlProblem("  ")).toMatch(/empty/);
  });
});
