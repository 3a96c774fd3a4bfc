import { describe, expect, it } from "vitest";
import { parseSeedSet, tokensOfType } from "./seed-set.ts";

const jwt = (n: number) => `aaa.bbb${n}.ccc`;

describe("parseSeedSet", () => {
  it("summarises Authrim's object shape by token type", () => {
    const r = parseSeedSet({ tokens: [{ access_token: jwt(1), type: "valid" }, { access_token: jwt(2), type: "wrong_client" }, { access_token: jwt(3), type: "valid" }], metadata: {} });
    expect(r.ok && r.summary).toEqual({ format: "authrim", total: 3, counts: { valid: 2, wrong_client: 1 } });
    expect(r.ok && tokensOfType(r.tokens)).toEqual([jwt(1), jwt(3)]);
  });

  it("reads a bare array as valid tokens", () => {
    const r = parseSeedSet([jwt(1), jwt(2)]);
    expect(r.ok && r.summary).toEqual({ format: "array", total: 2, counts: { valid: 2 } });
  });

  it("reports every bad entry (capped at 20) with its path", () => {
    const r = parseSeedSet({ tokens: Array.from({ length: 30 }, () => ({ access_token: "x", type: "nope" })) });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems).toHaveLength(20);
      expect(r.problems.slice(0, 2).map((p) => p.field)).toEqual(["tokens[0].access_token", "tokens[0].type"]);
    }
  });
});
