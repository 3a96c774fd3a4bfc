import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_splitSqlQuery } from "wrangler";
import { splitSql } from "./sql-split.ts";

const dir = join(import.meta.dirname, "..", "migrations");
const normalise = (statements: string[]) =>
  statements
    .map((s) =>
      s
        .replace(/--[^\n]*/g, "")
        .replace(/;\s*$/, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter(Boolean);

describe("splitSql", () => {
  it.each(readdirSync(dir).filter((f) => f.endsWith(".sql")))("splits %s into the statements wrangler's splitter finds", (name) => {
    const sql = readFileSync(join(dir, name), "utf8");
    expect(normalise(splitSql(sql))).toEqual(normalise(unstable_splitSqlQuery(sql)));
  });

  it.each([
    // A semicolon in a comment is not a statement's end (0002's comments have one).
    ["-- a; b\nCREATE TABLE t (x);", ["CREATE TABLE t (x)"]],
    // Nor is one in a string, and a doubled quote does not end the string.
    ["INSERT INTO t VALUES ('a;''b');SELECT 1", ["INSERT INTO t VALUES ('a;''b')", "SELECT 1"]],
    // Block comments go; blank statements are dropped.
    ["/* x; y */ SELECT 1;;", ["SELECT 1"]],
  ])("splits %j", (sql, expected) => {
    expect(splitSql(sql)).toEqual(expected);
  });
});
