/**
 * Seed sets in R2 (`seeds/<name>.json`): upload, list, signed URLs, and the signed fetch
 * that k6 and shards use without the API token. Listings show counts and hashes, never
 * tokens: seed tokens are credentials.
 *
 * Limit: a seed set is uploaded in one request of at most MAX_SEED_BYTES (it is parsed
 * and validated in the Worker, whose isolate has 128 MB).
 */
import { Hono } from "hono";
import { parseDurationMs } from "../../core/spec/duration.ts";
import { parseSeedSet, SEED_NAME, seedObjectKey, TOKEN_TYPES, tokensOfType, type SeedSummary, type TokenType } from "../../core/data/seed-set.ts";
import type { Env } from "../../workers/env.ts";
import { ApiError, badRequest, forbidden, notFound, limitedBody } from "./api-errors.ts";
import { seedUrlKey, signSeedUrl, verifySeedUrl } from "./signed-url.ts";
import { sha256Hex } from "../../core/data/web-crypto.ts";

export const MAX_SEED_BYTES = 32 * 1024 * 1024;
const MAX_URL_LIFETIME_MS = 7 * 24 * 3600_000;

type App = { Bindings: Env };

function checkName(name: string): string {
  if (!SEED_NAME.test(name)) throw badRequest("bad seed name", [{ field: "name", detail: "use 1–64 of a-z 0-9 . _ -, starting with a letter or digit" }]);
  return name;
}

interface SeedListing extends SeedSummary {
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly createdAt: string;
}

function listing(name: string, size: number, meta: Record<string, string> | undefined): SeedListing {
  return {
    name,
    size,
    kind: (meta?.kind ?? "access-tokens") as SeedSummary["kind"],
    format: (meta?.format ?? "authrim") as SeedSummary["format"],
    total: Number(meta?.total ?? 0),
    counts: JSON.parse(meta?.counts ?? "{}") as SeedSummary["counts"],
    sha256: meta?.sha256 ?? "",
    createdAt: meta?.createdAt ?? "",
  };
}

/** Routes under /v1/seeds (behind the API token). */
export const seedsApi = new Hono<App>();

seedsApi.put("/:name", async (c) => {
  const name = checkName(c.req.param("name"));
  const bytes = await limitedBody(
    c.req.raw,
    MAX_SEED_BYTES,
    () => new ApiError(413, "seed-too-large", "Seed set too large", `upload at most ${MAX_SEED_BYTES} bytes per seed set`),
  );
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw badRequest("the body must be a JSON seed set", [{ field: "(body)", detail: "not valid JSON" }]);
  }
  const parsed = parseSeedSet(doc);
  if (!parsed.ok) throw new ApiError(400, "invalid-seed", "Invalid seed set", `${parsed.problems.length} problem(s) in the seed set`, parsed.problems);
  const meta = {
    kind: parsed.summary.kind,
    format: parsed.summary.format,
    total: String(parsed.summary.total),
    counts: JSON.stringify(parsed.summary.counts),
    sha256: await sha256Hex(bytes),
    createdAt: new Date().toISOString(),
  };
  await c.env.SEEDS.put(seedObjectKey(name), bytes, { httpMetadata: { contentType: "application/json" }, customMetadata: meta });
  return c.json(listing(name, bytes.byteLength, meta), 201);
});

seedsApi.get("/", async (c) => {
  const seeds: SeedListing[] = [];
  let cursor: string | undefined;
  do {
    const page = await c.env.SEEDS.list({ prefix: "seeds/", include: ["customMetadata"], ...(cursor ? { cursor } : {}) });
    for (const o of page.objects) seeds.push(listing(o.key.slice(6, -5), o.size, o.customMetadata));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return c.json({ seeds });
});

seedsApi.post("/:name/url", async (c) => {
  const name = checkName(c.req.param("name"));
  const body = ((await c.req.json().catch(() => ({}))) ?? {}) as { expiresIn?: unknown; format?: unknown; type?: unknown };
  const lifetimeMs = parseDurationMs(body.expiresIn ?? "1h");
  const problems = [];
  if (lifetimeMs === undefined || lifetimeMs <= 0 || lifetimeMs > MAX_URL_LIFETIME_MS)
    problems.push({ field: "expiresIn", detail: "a duration between 1s and 168h" });
  const format = body.format ?? "object";
  if (format !== "object" && format !== "array") problems.push({ field: "format", detail: 'must be "object" or "array"' });
  const type = body.type ?? "valid";
  if (!TOKEN_TYPES.includes(type as TokenType)) problems.push({ field: "type", detail: `must be one of ${TOKEN_TYPES.join(", ")}` });
  if (problems.length) throw badRequest("bad signed-URL request", problems);
  if (!(await c.env.SEEDS.head(seedObjectKey(name)))) throw notFound(`seed set ${name}`);
  const exp = Math.floor((Date.now() + lifetimeMs!) / 1000);
  const url = await signSeedUrl(await seedUrlKey(c.env), new URL(c.req.url).origin, { name, format: format as "object" | "array", type: type as string, exp });
  return c.json({ name, url, format, ...(format === "array" ? { type } : {}), expiresAt: new Date(exp * 1000).toISOString() }, 201);
});

/** GET /seeds/:name?exp=…&sig=…[&format=array&type=valid] — no API token, the signature is the credential. */
export async function signedSeedFetch(c: import("hono").Context<App>): Promise<Response> {
  const name = c.req.param("name") ?? "";
  if (!SEED_NAME.test(name)) throw notFound(`seed set ${name}`);
  const check = await verifySeedUrl(await seedUrlKey(c.env), name, new URL(c.req.url).searchParams, Math.floor(Date.now() / 1000));
  if (!check.ok) {
    const detail = check.reason === "expired" ? "this signed URL has expired; ask for a new one" : "the URL's signature does not match";
    throw forbidden(`seed-url-${check.reason.replace("_", "-")}`, "Seed URL refused", detail);
  }
  const object = await c.env.SEEDS.get(seedObjectKey(name));
  if (!object) throw notFound(`seed set ${name}`);
  const headers = { "content-type": "application/json", "cache-control": "private, no-store" };
  if (check.fields.format === "object") return new Response(object.body, { headers });
  // The array form: for token sets, the bare JWTs of one type (Authrim's userinfo cloud
  // script); for other kinds, the bare list of entries.
  const parsed = parseSeedSet((await object.json()) as unknown);
  if (!parsed.ok) throw new ApiError(500, "seed-unreadable", "Stored seed set is unreadable", `seed set ${name} no longer validates`);
  const body = parsed.data.kind === "access-tokens" ? tokensOfType(parsed.data.entries, check.fields.type as TokenType) : parsed.data.entries;
  return new Response(JSON.stringify(body), { headers });
}
