import { describe, expect, it } from "vitest";
import type { DevFile } from "./dev-file.ts";
import { LOCAL_ADMIN_SECRET, namedValues, withOverrides } from "./spec-overrides.ts";

const dev = { targetAdminSecret: "local-admin" } as DevFile;

describe("--var and --secret", () => {
  it("parses NAME=VALUE pairs and refuses anything else by flag", () => {
    expect(namedValues("var", ["build=v2", "empty=", "eq=a=b"])).toEqual({ build: "v2", empty: "", eq: "a=b" });
    expect(() => namedValues("var", ["=x"])).toThrow(/--var: "=x" is not NAME=VALUE/);
    expect(() => namedValues("secret", ["no-equals"])).toThrow(/--secret/);
  });

  it("merges over the spec's own values and resolves the local admin secret marker", () => {
    const spec = { vars: { build: "v1", keep: "k" }, secrets: { admin: LOCAL_ADMIN_SECRET, other: "o" } };
    expect(withOverrides(spec, { build: "v2" }, { other: "O" }, dev)).toEqual({
      vars: { build: "v2", keep: "k" },
      secrets: { admin: "local-admin", other: "O" },
    });
    expect(() => withOverrides(spec, {}, {}, null)).toThrow(/needs a running local stack/);
    expect(withOverrides({ steps: [] }, {}, {}, null)).toEqual({ steps: [] });
  });
});
