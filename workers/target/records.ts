/**
 * A key/value records API under `/app/v1/records` and `/app/v2/records`, for the CRUD
 * load test with hot keys. The two prefixes are two "builds" of the same API over the same
 * D1 table (migrations/0003_records.sql), so one spec with a variable for the prefix
 * compares them: v1 reads D1 every time; v2 reads through a per-isolate cache
 * (record-cache.ts: LRU of 512 records, 1 s TTL, one load per hot key at a time). Writes
 * of either build update that cache, so within an isolate v2 never answers an older value
 * than v1 would.
 *
 * | route (`v1` or `v2`) | answer |
 * |---|---|
 * | `PUT /app/v1/records/:key` `{"value": <any JSON>}` | 200 `{key, version}`: version 1 on create, +1 on each write |
 * | `GET /app/v1/records/:key` | 200 `{key, value, version}`; 404 `{error}` when absent; v2 adds `x-cache: hit \| coalesced \| miss` |
 * | `POST /app/v1/records/bulk` `{"count": N, "prefix": "key-", "from": 0}` | 200 `{created: N}`: keys `<prefix><from>` … `<prefix><from+N-1>` with value `{"n": i}` (N ≤ 100000, prefix default `key-`, from default 0); idempotent |
 * | `GET /app/v1/records?prefix=key-` | 200 `{records: [[key, version], …]}`: every key with the prefix (at most 100000), in key order |
 * | `DELETE /app/v1/records?prefix=key-` | 200 `{deleted: n}`: every key starting with the prefix (required) |
 *
 * Keys are 1–128 of `A-Za-z0-9_.:-`, values up to 64 KiB of JSON; bad input answers 400
 * naming every problem. v2's staleness: an isolate sees its own writes at once, other
 * isolates' writes once its entry expires (≤ 1 s); see record-cache.ts.
 */
import { Hono, type Context } from "hono";
import { RecordCache } from "./record-cache.ts";

export interface RecordsEnv {
  readonly TARGET_DB: D1Database;
}

type App = { Bindings: RecordsEnv };

interface StoredRecord {
  readonly value: unknown;
  readonly version: number;
}

const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
const KEY_PROBLEM = "key: 1–128 characters of A-Za-z0-9 _ . : -";
const MAX_VALUE_BYTES = 64 * 1024;
const MAX_BULK = 100_000;
/** Rows per bulk statement; the statements of one bulk call run as one D1 batch (a transaction). */
const BULK_ROWS_PER_STATEMENT = 10_000;

/** v2's cache: per isolate, shared by every request this isolate serves. */
export const v2Cache = new RecordCache<StoredRecord>({ capacity: 512, ttlMs: 1_000 });

/** Both builds, as mounted under `/app` by index.ts. */
export const recordsApp = new Hono<App>()
  .route("/v1/records", recordsApi({ readThroughCache: false }))
  .route("/v2/records", recordsApi({ readThroughCache: true }));

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The `value` of a `{"value": …}` body, at most MAX_VALUE_BYTES of JSON. */
async function readValue(c: Context<App>): Promise<Parsed<unknown>> {
  const body = await c.req.json().catch(() => undefined);
  if (typeof body !== "object" || body === null || Array.isArray(body) || !("value" in body)) {
    return { ok: false, problem: 'body: a JSON object {"value": <any JSON>}' };
  }
  const value = (body as { value: unknown }).value;
  if (new TextEncoder().encode(JSON.stringify(value)).byteLength > MAX_VALUE_BYTES)
    return { ok: false, problem: `value: at most ${MAX_VALUE_BYTES} bytes of JSON` };
  return { ok: true, value };
}

/** A key prefix (bulk, delete): 1–120 key characters, so `<prefix><index>` stays a valid key. */
function prefixOf(raw: unknown): Parsed<string> {
  return typeof raw === "string" && /^[A-Za-z0-9_.:-]{1,120}$/.test(raw)
    ? { ok: true, value: raw }
    : { ok: false, problem: "prefix: 1–120 characters of A-Za-z0-9 _ . : -" };
}

/**
 * A range on the primary key rather than LIKE, where `_` would be a wildcard: keys with the
 * prefix are exactly those ≥ prefix and < the prefix with its last character + 1.
 */
function prefixRange(prefix: string): [string, string] {
  const last = prefix.length - 1;
  return [prefix, prefix.slice(0, last) + String.fromCharCode(prefix.charCodeAt(last) + 1)];
}

const bad = (c: Context<App>, problems: readonly string[]) => c.json({ error: problems.join("; "), problems }, 400);

async function selectRecord(db: D1Database, key: string): Promise<StoredRecord | null> {
  const row = await db.prepare("SELECT value, version FROM app_records WHERE key = ?1").bind(key).first<{ value: string; version: number }>();
  return row ? { value: JSON.parse(row.value), version: row.version } : null;
}

/** A bulk call's request: how many keys, the first key's number, and their prefix. */
interface BulkRequest {
  readonly count: number;
  readonly from: number;
  readonly prefix: string;
}

/** The `{"count": N, "prefix": "key-", "from": 0}` body of a bulk call, or every problem with it. */
function bulkRequestOf(
  body: { count?: unknown; prefix?: unknown; from?: unknown } | null,
): { ok: true; value: BulkRequest } | { ok: false; problems: string[] } {
  const count = body?.count;
  const from = body?.from ?? 0;
  const prefix = prefixOf(body?.prefix ?? "key-");
  const problems = [
    ...(typeof count === "number" && Number.isInteger(count) && count >= 0 && count <= MAX_BULK ? [] : [`count: an integer in 0–${MAX_BULK}`]),
    ...(typeof from === "number" && Number.isInteger(from) && from >= 0 && from <= 1_000_000_000 ? [] : ["from: an integer ≥ 0, the first key's number"]),
    ...(prefix.ok ? [] : [prefix.problem]),
  ];
  if (problems.length || !prefix.ok || typeof count !== "number" || typeof from !== "number") return { ok: false, problems };
  return { ok: true, value: { count, from, prefix: prefix.value } };
}

/** Writes a bulk call's keys, BULK_ROWS_PER_STATEMENT rows a statement, all in one D1 batch. */
async function writeBulk(db: D1Database, { count, from, prefix }: BulkRequest, nowMs: number): Promise<void> {
  // Keys come from a recursive CTE, so a statement binds 4 values however many rows it
  // writes (D1 allows 100 bound parameters per statement). The start is cast because D1
  // may bind a JS number as REAL, which would make keys like `key-0.0`. A key whose value
  // is already the seed value is left alone, so repeating the call changes nothing.
  const statement = db.prepare(
    `WITH RECURSIVE seq(i) AS (SELECT CAST(?2 AS INTEGER) UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?3)
     INSERT INTO app_records (key, value, version, updated_at)
     SELECT ?1 || i, json_object('n', i), 1, ?4 FROM seq WHERE true
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = app_records.version + 1, updated_at = excluded.updated_at
     WHERE app_records.value <> excluded.value`,
  );
  const statements: D1PreparedStatement[] = [];
  for (let start = 0; start < count; start += BULK_ROWS_PER_STATEMENT) {
    statements.push(statement.bind(prefix, from + start, from + Math.min(count, start + BULK_ROWS_PER_STATEMENT), nowMs));
  }
  if (statements.length) await db.batch(statements);
}

/** Creates or overwrites one record; its new version (1 on create, +1 on each write). */
async function upsertRecord(db: D1Database, key: string, json: string, nowMs: number): Promise<number> {
  const row = await db
    .prepare(
      `INSERT INTO app_records (key, value, version, updated_at) VALUES (?1, ?2, 1, ?3)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = app_records.version + 1, updated_at = excluded.updated_at
       RETURNING version`,
    )
    .bind(key, json, nowMs)
    .first<{ version: number }>();
  return row!.version;
}

/**
 * One build of the API. Both keep v2Cache in step with their writes; only the caching
 * build reads through it, the other makes every read a D1 query.
 */
function recordsApi({ readThroughCache }: { readonly readThroughCache: boolean }): Hono<App> {
  const api = new Hono<App>();

  api.post("/bulk", async (c) => {
    const body = (await c.req.json().catch(() => null)) as { count?: unknown; prefix?: unknown; from?: unknown } | null;
    const request = bulkRequestOf(body);
    if (!request.ok) return bad(c, request.problems);
    await writeBulk(c.env.TARGET_DB, request.value, Date.now());
    v2Cache.invalidatePrefix(request.value.prefix);
    return c.json({ created: request.value.count });
  });

  api.get("/", async (c) => {
    const prefix = prefixOf(c.req.query("prefix"));
    if (!prefix.ok) return bad(c, [prefix.problem]);
    const [lower, upper] = prefixRange(prefix.value);
    const rows = await c.env.TARGET_DB.prepare("SELECT key, version FROM app_records WHERE key >= ?1 AND key < ?2 ORDER BY key LIMIT ?3")
      .bind(lower, upper, MAX_BULK)
      .all<{ key: string; version: number }>();
    return c.json({ records: rows.results.map((r) => [r.key, r.version]) });
  });

  api.delete("/", async (c) => {
    const prefix = prefixOf(c.req.query("prefix"));
    if (!prefix.ok) return bad(c, [prefix.problem]);
    const [lower, upper] = prefixRange(prefix.value);
    const result = await c.env.TARGET_DB.prepare("DELETE FROM app_records WHERE key >= ?1 AND key < ?2").bind(lower, upper).run();
    v2Cache.invalidatePrefix(prefix.value);
    return c.json({ deleted: result.meta.changes });
  });

  api.put("/:key", async (c) => {
    const key = c.req.param("key");
    const value = await readValue(c);
    const problems = [...(KEY.test(key) ? [] : [KEY_PROBLEM]), ...(value.ok ? [] : [value.problem])];
    if (problems.length || !value.ok) return bad(c, problems);
    const json = JSON.stringify(value.value);
    const version = await upsertRecord(c.env.TARGET_DB, key, json, Date.now());
    v2Cache.written(key, { value: JSON.parse(json), version }, Date.now());
    return c.json({ key, version });
  });

  api.get("/:key", async (c) => {
    const key = c.req.param("key");
    if (!KEY.test(key)) return bad(c, [KEY_PROBLEM]);
    const load = () => selectRecord(c.env.TARGET_DB, key);
    const read = readThroughCache ? await v2Cache.read(key, Date.now(), load) : { value: await load(), lookup: null };
    if (read.lookup) c.header("x-cache", read.lookup);
    if (!read.value) return c.json({ error: `no record ${key}` }, 404);
    return c.json({ key, value: read.value.value, version: read.value.version });
  });

  return api;
}
