/**
 * Seed sets in R2 behind signed URLs: upload, listing without tokens, signed fetch in both
 * forms, and refusal of expired, tampered and misdirected URLs.
 */
import { describe, expect, it } from "vitest";
import { api } from "./helpers.ts";

const jwt = (n: number) => `eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1${n}In0.c2lnbmF0dXJl${n}`;
const authrimSet = {
  tokens: [
    { access_token: jwt(1), type: "valid", user_id: "u1", jti: "j1", exp: 2000000000, shard_index: 1, region_key: "enam" },
    { access_token: jwt(2), type: "valid", user_id: "u2", jti: "j2", exp: 2000000000, shard_index: 2, region_key: "weur" },
    { access_token: jwt(3), type: "expired", user_id: "u3", jti: "j3", exp: 1000, shard_index: 3, region_key: "enam" },
    { access_token: jwt(4), type: "revoked", user_id: "u4", jti: "j4", exp: 2000000000, shard_index: 4, region_key: "enam" },
  ],
  metadata: { version: 3, test_name: "unit", generated_at: "2026-11-22T00:00:00Z", counts: { valid: 2, expired: 1, revoked: 1 }, total: 4 },
};

async function upload(name: string, body: unknown) {
  return api(`/v1/seeds/${name}`, { method: "PUT", body: JSON.stringify(body) });
}

async function signedUrl(name: string, request: Record<string, unknown> = {}) {
  const response = await api(`/v1/seeds/${name}/url`, { method: "POST", body: JSON.stringify(request) });
  return { response, body: (await response.json()) as { url: string; expiresAt: string } };
}

/** Fetches a signed URL without any API token, as k6 does with TOKEN_URL. */
const fetchSigned = (url: string) => api(new URL(url).pathname + new URL(url).search, { token: null });

describe("seed sets", () => {
  it("stores an Authrim token set and lists counts and hash, never a token", async () => {
    const response = await upload("tokens-4", authrimSet);
    expect(response.status).toBe(201);
    const listed = (await (await api("/v1/seeds")).json()) as { seeds: Array<Record<string, unknown>> };
    const entry = listed.seeds.find((s) => s.name === "tokens-4")!;
    expect(entry).toMatchObject({ format: "authrim", total: 4, counts: { valid: 2, expired: 1, revoked: 1 } });
    expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(listed)).not.toContain(jwt(1));
  });

  it("serves the stored document and the bare array of valid tokens through signed URLs", async () => {
    await upload("tokens-serve", authrimSet);
    const whole = await signedUrl("tokens-serve");
    expect(whole.response.status).toBe(201);
    expect(whole.body.url).toMatch(/\/seeds\/tokens-serve\?exp=\d+&sig=/);
    const served = await fetchSigned(whole.body.url);
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual(authrimSet);

    const array = await signedUrl("tokens-serve", { format: "array", type: "valid" });
    expect(await (await fetchSigned(array.body.url)).json()).toEqual([jwt(1), jwt(2)]);
    const expired = await signedUrl("tokens-serve", { format: "array", type: "expired" });
    expect(await (await fetchSigned(expired.body.url)).json()).toEqual([jwt(3)]);
  });

  it("accepts a bare array of JWTs as a seed set", async () => {
    expect((await upload("bare", [jwt(7), jwt(8)])).status).toBe(201);
    const { body } = await signedUrl("bare", { format: "array" });
    expect(await (await fetchSigned(body.url)).json()).toEqual([jwt(7), jwt(8)]);
  });

  it.each([
    // [what was done to the URL, expected problem type]
    [
      "expired",
      (url: URL) => {
        url.searchParams.set("exp", String(Math.floor(Date.now() / 1000) - 10));
      },
      "seed-url-bad-signature",
    ],
    [
      "a changed signature",
      (url: URL) => {
        url.searchParams.set(
          "sig",
          url.searchParams.get("sig")!.replace(/^./, (c) => (c === "A" ? "B" : "A")),
        );
      },
      "seed-url-bad-signature",
    ],
    [
      "a different seed name",
      (url: URL) => {
        url.pathname = "/seeds/bare";
      },
      "seed-url-bad-signature",
    ],
    [
      "format switched to array",
      (url: URL) => {
        url.searchParams.set("format", "array");
      },
      "seed-url-bad-signature",
    ],
    [
      "no signature",
      (url: URL) => {
        url.searchParams.delete("sig");
      },
      "seed-url-malformed",
    ],
  ])("refuses a URL with %s (403)", async (_, tamper, type) => {
    await upload("tokens-guarded", authrimSet);
    await upload("bare", [jwt(7)]);
    const { body } = await signedUrl("tokens-guarded");
    const url = new URL(body.url);
    tamper(url);
    const response = await fetchSigned(url.href);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { type: string }).type).toMatch(new RegExp(`${type}$`));
  });

  it("refuses a URL whose expiry has passed, even with a valid signature", async () => {
    await upload("short-lived", authrimSet);
    const { body } = await signedUrl("short-lived", { expiresIn: "1s" });
    await new Promise((r) => setTimeout(r, 2100));
    const response = await fetchSigned(body.url);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { type: string }).type).toMatch(/seed-url-expired$/);
  });

  it.each([
    // [body, field named in the problem]
    [{ tokens: [{ access_token: "not-a-jwt", type: "valid" }] }, "tokens[0].access_token"],
    [{ tokens: [{ access_token: jwt(1), type: "sorta-valid" }] }, "tokens[0].type"],
    [{ tokens: [] }, "tokens"],
    [["not-a-jwt"], "[0]"],
    [{ nope: true }, "(body)"],
  ])("refuses an invalid seed set %j naming %s, storing nothing", async (body, field) => {
    const response = await upload("broken", body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { problems: Array<{ field: string }> }).problems.map((p) => p.field)).toContain(field);
    expect((await api("/v1/seeds/broken/url", { method: "POST", body: "{}" })).status).toBe(404);
  });

  it("needs the API token for everything but the signed fetch, and checks names", async () => {
    expect((await api("/v1/seeds", { token: null })).status).toBe(401);
    expect((await api("/v1/seeds/x", { method: "PUT", body: "[]", token: null })).status).toBe(401);
    expect((await upload("Bad Name", authrimSet)).status).toBe(400);
    expect((await api("/v1/seeds/missing/url", { method: "POST", body: "{}" })).status).toBe(404);
  });
});
