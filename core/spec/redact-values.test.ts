import { describe, expect, it } from "vitest";
import { MAX_SEARCHED_LENGTH, valueHider } from "./redact-values.ts";

describe("valueHider with a run's data among its secrets", () => {
  it("searches the tokens, not a megabyte of seed JSON (whose pattern would not compile)", () => {
    const seedJson = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ token: `token-${i}-${"x".repeat(40)}` })));
    const hider = valueHider([seedJson, "s3cr3t-api-key-value"]);
    expect(hider.values).toEqual(["s3cr3t-api-key-value"]);
    expect(hider.hide("GET /x?k=s3cr3t-api-key-value failed")).toBe("GET /x?k=[redacted] failed");
  });

  it("still searches a value of the longest searched length", () => {
    const long = "k".repeat(MAX_SEARCHED_LENGTH);
    expect(valueHider([long]).hide(`a ${long} b`)).toBe("a [redacted] b");
  });
});
