/**
 * The read-only SQL filter against generated walk-arounds, judged by SQLite
 * (test/support/sql-walk-arounds.ts). The walk-arounds themselves run in
 * core/bad-input.fuzz.test.ts (300 cases) and `npm run bench -- --only fuzz` (10,000); here:
 * the oracle can fail, and the generator reaches both sides of the filter.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resultsSchemaDatabase, sqliteObjection, walkAroundAttempt } from "../../test/support/sql-walk-arounds.ts";
import { boundedSql, readOnlySqlProblem } from "./read-only-sql.ts";

const db = resultsSchemaDatabase();

describe("SQLite as the oracle for the read-only SQL filter", () => {
  it.each([
    // [SQL the filter must refuse, what SQLite objects to]
    ["SELECT '--' AS a) ; DELETE FROM tripwire ; SELECT * FROM (SELECT 1", /second statement in "SELECT \* FROM \(/],
    ["SELECT 1; DELETE FROM tripwire", /second statement in "SELECT 1; DELETE/],
    ["WITH w AS (SELECT 1) DELETE FROM tripwire", /SQLITE_DELETE on tripwire/],
    ["WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3) SELECT count(*) FROM c", /SQLITE_RECURSIVE/],
    ["SELECT load_extension('x')", /calls load_extension\(\)/],
    ["SELECT randomblob(9)", /calls randomblob\(\)/],
    ["SELECT value FROM settings", /reads the settings table/],
  ])("objects to %j", (sql, objection) => {
    expect(readOnlySqlProblem(sql)).not.toBeNull();
    expect(sqliteObjection(db, sql)).toMatch(objection);
  });

  it("has no objection to a query that only reads, or to one whose first statement does not compile (nothing runs)", () => {
    expect(sqliteObjection(db, "SELECT s.key, SUM(s.value) FROM windows, json_each(windows.statuses_json) s GROUP BY s.key")).toBeNull();
    expect(sqliteObjection(db, "SELECT no_such_column FROM runs")).toBeNull();
  });

  it("generates walk-arounds the filter refuses and ones it accepts that SQLite compiles", () => {
    const attempts = fc.sample(walkAroundAttempt, { numRuns: 300, seed: 20261125 });
    const accepted = attempts.filter((sql) => readOnlySqlProblem(sql) === null);
    const compiled = accepted.filter((sql) => {
      try {
        db.prepare(boundedSql(sql, 10));
        return true;
      } catch {
        return false;
      }
    });
    // Measured with this seed: 37 accepted, 18 of them compile. Each side must stay exercised.
    expect(attempts.length - accepted.length).toBeGreaterThan(150);
    expect(accepted.length).toBeGreaterThan(15);
    expect(compiled.length).toBeGreaterThan(5);
  });
});
