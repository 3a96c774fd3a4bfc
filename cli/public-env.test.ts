import { describe, expect, it } from "vitest";
import { withPublicEnv } from "./public-env.ts";

const bundle = "a".repeat(64);

describe("withPublicEnv (--public-env NAME)", () => {
  it("names the public __ENV names in the script of a run of one scenario", () => {
    const spec = { executor: "constant-vus", script: { bundle, env: { BASE_URL: "http://127.0.0.1:9090", API_KEY: "k" } } };
    expect(withPublicEnv(spec, ["BASE_URL", "BASE_URL"])).toEqual({ ...spec, script: { ...spec.script, publicEnv: ["BASE_URL"] } });
  });

  it("names them in every scenario's script of a run of several, a scenario's own env counting as given", () => {
    const spec = {
      scenarios: {
        browse: { executor: "constant-vus", script: { bundle, env: { BASE_URL: "u" } } },
        buy: { executor: "constant-vus", script: { bundle, env: { BASE_URL: "u", CART: "c" } } },
      },
    };
    const out = withPublicEnv(spec, ["CART"]) as { scenarios: Record<string, { script: { publicEnv: string[] } }> };
    expect(Object.values(out.scenarios).map((s) => s.script.publicEnv)).toEqual([["CART"], ["CART"]]);
  });

  it("leaves the spec as it is without the flag", () => {
    const spec = { script: { bundle, env: { A: "1" } } };
    expect(withPublicEnv(spec, undefined)).toBe(spec);
  });

  it("refuses a name the run was not given, naming it and the names it has (a typo would hide what it meant to show)", () => {
    expect(() => withPublicEnv({ script: { bundle, env: { BASE_URL: "u" } } }, ["BASE_UR"])).toThrow(
      "--public-env BASE_UR: not an __ENV name this run was given (its names: BASE_URL)",
    );
  });
});
