import { describe, expect, it } from "vitest";
import { tokenizeSql, unquotedName } from "./sql-tokens.ts";

/** The tokens of `sql` as `kind:text`, or the tokenizer's error. */
function lex(sql: string): string[] | string {
  const r = tokenizeSql(sql);
  return r.ok ? r.tokens.map((t) => `${t.kind}:${t.text}`) : r.error;
}

describe("tokenizeSql", () => {
  it.each([
    // [sql, tokens, what the row shows]
    ["SELECT '--' AS a -- note", ["word:SELECT", "string:'--'", "word:AS", "word:a"], "a -- inside a string starts no comment"],
    ["SELECT 1 /* it's */ AS a", ["word:SELECT", "number:1", "word:AS", "word:a"], "a quote inside a comment starts no string"],
    ["SELECT 'it''s'", ["word:SELECT", "string:'it''s'"], "a doubled quote stays inside the string"],
    [
      'SELECT "a--b", `c;d`, [e;f]',
      ["word:SELECT", 'quoted-name:"a--b"', "operator:,", "quoted-name:`c;d`", "operator:,", "quoted-name:[e;f]"],
      "three quoted names",
    ],
    ['SELECT "a""b"', ["word:SELECT", 'quoted-name:"a""b"'], "a doubled double quote"],
    ["SELECT 1;-- end", ["word:SELECT", "number:1", "operator:;"], "the ; is a token, the comment is not"],
    [
      "SELECT a->>'$.x', b->'$', c||d",
      [
        "word:SELECT",
        "word:a",
        "operator:->>",
        "string:'$.x'",
        "operator:,",
        "word:b",
        "operator:->",
        "string:'$'",
        "operator:,",
        "word:c",
        "operator:||",
        "word:d",
      ],
      "JSON arrows and ||",
    ],
    [
      "SELECT 1_000, .5e-3, 0x1F, x'0A'",
      ["word:SELECT", "number:1_000", "operator:,", "number:.5e-3", "operator:,", "number:0x1F", "operator:,", "blob:x'0A'"],
      "numbers and a blob",
    ],
    [
      "SELECT ?1, ?, :run, @r, $a::b",
      [
        "word:SELECT",
        "parameter:?1",
        "operator:,",
        "parameter:?",
        "operator:,",
        "parameter::run",
        "operator:,",
        "parameter:@r",
        "operator:,",
        "parameter:$a::b",
      ],
      "parameters",
    ],
    ["SELECT a$b, _x, été", ["word:SELECT", "word:a$b", "operator:,", "word:_x", "operator:,", "word:été"], "$ inside a name, non-ASCII letters"],
    ["\uFEFFSELECT\t1\r\n", ["word:SELECT", "number:1"], "a byte-order mark and whitespace are not tokens"],
    [
      "SELECT 1 <> 2 != 3 <= 4 >= 5 == 6 << 7 >> 8",
      [
        "word:SELECT",
        "number:1",
        "operator:<>",
        "number:2",
        "operator:!=",
        "number:3",
        "operator:<=",
        "number:4",
        "operator:>=",
        "number:5",
        "operator:==",
        "number:6",
        "operator:<<",
        "number:7",
        "operator:>>",
        "number:8",
      ],
      "two-character operators",
    ],
  ])("%j", (sql, tokens) => {
    expect(lex(sql)).toEqual(tokens);
  });

  it.each([
    // [sql, error, what the row shows]
    ["SELECT 'oops", /^an unterminated string at character 8: 'oops$/, "a string never closed"],
    ['SELECT "oops', /unterminated "quoted name" at character 8/, "a quoted name never closed"],
    ["SELECT `oops", /unterminated `quoted name` at character 8/, "backticks never closed"],
    ["SELECT [oops", /unterminated \[quoted name\] at character 8/, "brackets never closed"],
    ["SELECT 1 /* oops", /unterminated \/\* comment at character 10/, "a comment never closed"],
    ["SELECT 1 /*", /unterminated \/\* comment/, "/* at the very end (SQLite: / and *), which a wrapper would close over its )"],
    ["SELECT '' '", /unterminated string at character 11/, "an empty string, then an open one"],
    ["SELECT 1abc", /unrecognized token "1abc"/, "a number running into a name"],
    ["SELECT x'ABC'", /malformed blob literal/, "an odd number of hex digits"],
    ["SELECT $a(;DELETE)", /parameter name with parentheses/, "a Tcl-style parameter that could hide a ;"],
    ["SELECT :", /unrecognized token ":"/, "a parameter without a name"],
    ["SELECT 1 \\ 2", /unrecognized character "\\\\" at character 10/, "a character SQLite does not know"],
    ["SELECT !1", /unrecognized character "!"/, "! without ="],
    ["SELECT 1\0; DELETE FROM runs", /NUL character at character 9/, "SQLite stops reading at NUL: what follows would be unseen"],
    ["SELECT\v1", /unrecognized character/, "a vertical tab starts no whitespace in SQLite"],
  ])("refuses %j", (sql, error) => {
    expect(lex(sql)).toMatch(error);
  });

  it("reads a name as SQLite compares it: unquoted, only ASCII letters case-folded", () => {
    const lexed = tokenizeSql(`"Set""Tings" [SETTINGS] 'settings' Settings ÉTÉ`);
    expect(lexed.ok && lexed.tokens.map(unquotedName)).toEqual(['set"tings', "settings", "settings", "settings", "ÉtÉ"]);
  });
});
