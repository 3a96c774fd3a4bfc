import { describe, expect, it } from "vitest";
import { seedErrorAdvice } from "./seed-command.ts";

describe("seedErrorAdvice", () => {
  it.each<[string, string, number | null, RegExp | null]>([
    // [what happened, the seeder's message, the provider's status, the advice]
    [
      "Authrim's test endpoints are off (403 on /api/admin/test/*)",
      'signing key: GET /api/admin/test/signing-key answered 403: {"error":"access_denied"}',
      403,
      /ENABLE_TEST_ENDPOINTS=true/,
    ],
    ["the admin secret is wrong", "user creation: POST /api/admin/users answered 401: {}", 401, /ADMIN_API_SECRET/],
    ["a 403 outside the test endpoints says nothing of them", "token: POST /token answered 403: {}", 403, null],
    ["a provider that cannot be reached is not a setting", "discovery: cannot reach http://127.0.0.1:9/", null, null],
  ])("%s", (_, message, status, advice) => {
    const said = seedErrorAdvice(message, status);
    if (advice === null) expect(said).toBeNull();
    else expect(said).toMatch(advice);
  });
});
