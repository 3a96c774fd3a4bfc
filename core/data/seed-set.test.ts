import { describe, expect, it } from "vitest";
import { activeAnswerComplete, CHALLENGE_SPLIT_CODES, codesToVerify, parseSeedSet, tokensOfType } from "./seed-set.ts";
import { fnv1a32 } from "./fnv1a.ts";

const jwt = (n: number) => `aaa.bbb${n}.ccc`;

describe("parseSeedSet", () => {
  it("summarises Authrim's object shape by token type", () => {
    const r = parseSeedSet({
      tokens: [
        { access_token: jwt(1), type: "valid" },
        { access_token: jwt(2), type: "wrong_client" },
        { access_token: jwt(3), type: "valid" },
      ],
      metadata: {},
    });
    expect(r.ok && r.summary).toEqual({ kind: "access-tokens", format: "authrim", total: 3, counts: { valid: 2, wrong_client: 1 } });
    expect(r.ok && r.data.kind === "access-tokens" && tokensOfType(r.data.entries)).toEqual([jwt(1), jwt(3)]);
  });

  it("reads a bare array as valid tokens", () => {
    const r = parseSeedSet([jwt(1), jwt(2)]);
    expect(r.ok && r.summary).toEqual({ kind: "access-tokens", format: "array", total: 2, counts: { valid: 2 } });
  });

  it("reports every bad entry (capped at 20) with its path", () => {
    const r = parseSeedSet({ tokens: Array.from({ length: 30 }, () => ({ access_token: "x", type: "nope" })) });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems).toHaveLength(20);
      expect(r.problems.slice(0, 2).map((p) => p.field)).toEqual(["tokens[0].access_token", "tokens[0].type"]);
    }
  });

  it("recognises the other kinds in object and bare-array form", () => {
    const users = [{ email: "a@test", userId: "u1" }];
    const refresh = [{ token: "rt-1", user_id: "u1", client_id: "c", client_secret: "s", jti: "j", rtv: 1, generation: 1, shard_index: 3 }];
    const sessions = [{ session_id: "s1", user_id: "u1" }];
    const codes = [{ code: "c1", code_verifier: "v".repeat(43), redirect_uri: "http://127.0.0.1/cb", state: "st", nonce: "n", user_id: "u1", shard_index: 0 }];
    const cases: Array<[unknown, string, string]> = [
      [{ users, emails: ["a@test"], metadata: {} }, "users", "object"],
      [users, "users", "array"],
      [{ refresh_tokens: refresh }, "refresh-tokens", "object"],
      [refresh, "refresh-tokens", "array"],
      [{ sessions }, "sessions", "object"],
      [sessions, "sessions", "array"],
      [{ codes }, "auth-codes", "object"],
      [codes, "auth-codes", "array"],
    ];
    for (const [doc, kind, format] of cases) {
      const r = parseSeedSet(doc);
      expect(r.ok && r.summary).toEqual({ kind, format, total: 1, counts: {} });
      expect(r.ok && r.data.entries).toHaveLength(1);
    }
  });

  it("names the missing or mistyped fields of other kinds, and an unknown shape", () => {
    const r = parseSeedSet({ refresh_tokens: [{ token: "rt", client_id: "c", rtv: "one" }] });
    expect(!r.ok && r.problems).toEqual([
      { field: "refresh_tokens[0].user_id", detail: "must be the user's id" },
      { field: "refresh_tokens[0].rtv", detail: "must be an integer" },
    ]);
    const unknown = parseSeedSet({ things: [] });
    expect(!unknown.ok && unknown.problems[0]!.detail).toMatch(/expected a seed set/);
    expect(parseSeedSet([]).ok).toBe(false);
  });
});

describe("activeAnswerComplete", () => {
  const base = { active: true, scope: "openid", aud: "https://auth.example", sub: "u1", iss: "https://auth.example", client_id: "cid" };
  it.each([
    // [answer, token type, complete?, why]
    [base, "valid", true, "every claim Authrim's suite checks"],
    [{ ...base, aud: null }, "valid", false, "an active answer without its audience"],
    [{ ...base, scope: undefined }, "valid", false, "nor without its scope"],
    [base, "valid_exchanged", false, "an exchanged token's answer without act and resource"],
    [{ ...base, act: { sub: "client:svc" }, resource: "https://api.example/users" }, "valid_exchanged", true, "with them"],
    [{ ...base, act: {}, resource: "https://api.example/users" }, "valid_exchanged", false, "act without its sub"],
  ] as const)("%j as %s → %s (%s)", (answer, type, complete, _why) => {
    expect(activeAnswerComplete(answer, type)).toBe(complete);
  });
});

describe("codesToVerify", () => {
  it("verifies one code when one challenge-shard count is stored for every worker, seven otherwise", () => {
    expect(codesToVerify("kv")).toBe(1);
    for (const source of ["default", "env", undefined, null]) expect(codesToVerify(source)).toBe(CHALLENGE_SPLIT_CODES);
  });

  it("leaves a split less than a 1 % chance of passing: each code is found at most half the time", () => {
    // How often two counts pick the same shard for Authrim's hash of an OTP session id.
    const agreement = (a: number, b: number) => {
      let same = 0;
      for (let i = 0; i < 4000; i++) {
        const h = fnv1a32(`00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
        if (h % a === h % b) same++;
      }
      return same / 4000;
    };
    for (const [a, b] of [
      [4, 16],
      [8, 16],
      [1, 2],
      [4, 6],
      [16, 17],
    ] as const) {
      const p = agreement(a, b);
      expect(p, `${a} and ${b}`).toBeLessThan(0.56);
      expect(p ** CHALLENGE_SPLIT_CODES, `${a} and ${b}`).toBeLessThan(0.01);
    }
    expect(agreement(4, 16)).toBeCloseTo(0.25, 1);
  });
});
