import { describe, expect, it } from "vitest";
import { apiTokenProblem } from "./access.ts";

describe("apiTokenProblem", () => {
  it.each([
    // [token, refused, why]
    [undefined, true, "not set"],
    ["generate-one-with-openssl-rand-base64-32", true, "the placeholder .dev.vars.example once carried, which the Deploy button pre-fills"],
    ["q5m1y4T0dXQvZ2xkZmhrc2RmaGtqc2Rma2pzaGRm", false, "a real token"],
    ["hunter2", true, "short enough to guess"],
    ["0123456789abcdef0123456789abcde", true, "31 characters"],
    ["0123456789abcdef0123456789abcdef", false, "32 characters"],
  ])("%s → refused %s (%s)", (token, refused, _why) => {
    expect(apiTokenProblem(token) !== null).toBe(refused);
  });

  it("names the short token and the command that makes a good one", () => {
    const problem = apiTokenProblem("q5m1y4T0dXQvZ2xkZmhrc2RmaGtqc2Rma2pzaGRm", "read");
    expect(problem).toContain("EDGELOAD_READ_TOKEN has 4 characters");
    expect(problem).toContain("openssl rand -base64 32 | npx wrangler secret put EDGELOAD_READ_TOKEN");
  });
});
