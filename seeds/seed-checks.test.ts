import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { regionalJti } from "./access-tokens.ts";
import { Provider, SeedError } from "./provider-api.ts";
import { checkSpread } from "./users.ts";
import { verificationFailure } from "./verification-advice.ts";

describe("checkSpread", () => {
  const users = (ids: string[]) => new Map(ids.map((userId, i) => [i, { email: `u${i}@x`, userId }]));

  it("takes a set with as many distinct users as asked", () => {
    expect(() => checkSpread(users(["a", "b", "c"]), 3)).not.toThrow();
  });

  it("refuses a set a non-filtering user search collapsed onto one account", () => {
    // What Authrim's unfiltered page did to the old `?email=` lookup: every email → the newest user.
    expect(() => checkSpread(users(["a", "a", "a"]), 3)).toThrow(SeedError);
    expect(() => checkSpread(users(["a", "a", "a"]), 3)).toThrow(/3 accounts were asked for but the provider's answers map them to 1 distinct user:/);
  });
});

describe("regionalJti", () => {
  it.each([
    // [token index, shard, region]: Authrim's seeder ranges, enam 0–12, weur 13–25, apac 26–31
    [0, 0, "enam"],
    [12, 12, "enam"],
    [13, 13, "weur"],
    [31, 31, "apac"],
    [32, 0, "enam"], // round-robin over 32 shards
  ])("token %i → shard %i in %s", (i, shard, region) => {
    const id = regionalJti(i);
    expect(id).toMatchObject({ shard, region });
    expect(id.jti).toMatch(new RegExp(`^g2:${region}:${shard}:at_[A-Za-z0-9_-]{43}$`));
  });
});

describe("verificationFailure", () => {
  it("names the wrong types and, for audience and client, how to turn Authrim's strict validation on", () => {
    const text = verificationFailure(
      {
        verified: 80,
        incorrect: 40,
        results: {
          valid: { expected: true, correct: 20, incorrect: 0, errors: 0 },
          wrong_audience: { expected: false, correct: 0, incorrect: 20, errors: 0 },
          wrong_client: { expected: false, correct: 0, incorrect: 20, errors: 0 },
        },
      },
      "https://auth.example.com",
    );
    expect(text).toMatch(/^the provider's introspection disagreed with the token mix: 80 correct, 40 incorrect; the set was not stored/);
    expect(text).toContain("wrong_audience: expected active=false, 20 answered otherwise");
    expect(text).toContain(`curl -X PUT https://auth.example.com/api/admin/settings/introspection-validation`);
    expect(text).toContain(`'{"strictValidation": true}'`);
    expect(text).toContain("wait 60 s");
  });

  it("gives no strict-validation advice when only other types were wrong", () => {
    const text = verificationFailure(
      { verified: 1, incorrect: 1, results: { revoked: { expected: false, correct: 1, incorrect: 1, errors: 0 } } },
      "https://a",
    );
    expect(text).not.toContain("strictValidation");
  });
});

describe("a provider whose test endpoints are off", () => {
  it("names the setting that turns them on when a seeder's admin test call answers 403", async () => {
    // A loopback stand-in answering as Authrim v0.1.15 does with ENABLE_TEST_ENDPOINTS unset.
    const server = createServer((_request, response) => {
      response.writeHead(403, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "access_denied", error_code: "AR050001" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const provider = new Provider({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, adminSecret: "s" });
      const made = provider.admin("session creation", "/api/admin/test/sessions", { method: "POST", body: {} });
      await expect(made).rejects.toThrow(
        /session creation: POST \/api\/admin\/test\/sessions answered 403 \(the provider's test endpoints are off: set ENABLE_TEST_ENDPOINTS=true/,
      );
      // Any other admin call's 403 is the provider's own refusal, with no such advice.
      await expect(provider.admin("user creation", "/api/admin/users", { method: "POST", body: {} })).rejects.toThrow(/answered 403: /);
    } finally {
      server.close();
    }
  });
});
