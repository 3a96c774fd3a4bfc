import { describe, expect, it } from "vitest";
import { apiTokenProblem } from "./access.ts";

describe("apiTokenProblem", () => {
  it.each([
    // [token, refused, why]
    [undefined, true, "not set"],
    ["generate-one-with-openssl-rand-base64-32", true, "the placeholder .dev.vars.example once carried, which the Deploy button pre-fills"],
    ["q5m1y4T0dXQvZ2xkZmhrc2RmaGtqc2Rma2pzaGRm", false, "a real token"],
  ])("%s → refused %s (%s)", (token, refused, _why) => {
    expect(apiTokenProblem(token) !== null).toBe(refused);
  });
});
