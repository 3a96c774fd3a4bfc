/**
 * The records API (workers/target/records.ts) inside workerd with its D1: CRUD and the
 * bulk setup/teardown of a load test through both builds, key and body validation, and
 * the v2 build's read cache (record-cache.ts) — the same answers as v1, its own writes
 * seen at once, concurrent misses of a hot key sharing one read. The cache's eviction and
 * expiry are tested on the pure class with explicit times.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RecordCache } from "../../workers/target/record-cache.ts";

function call(method: string, path: string, body?: unknown): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(
    new Request(`http://target.test${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
    }),
  );
}

async function json<T>(response: Response | Promise<Response>): Promise<{ status: number; body: T }> {
  const r = await response;
  return { status: r.status, body: await r.json<T>() };
}

describe.each(["v1", "v2"])("/app/%s/records", (build) => {
  const base = `/app/${build}/records`;

  it("creates, reads, updates (version +1) and answers 404 for an absent key", async () => {
    const key = `${build}:crud.1`;
    expect((await call("GET", `${base}/${key}`)).status).toBe(404);
    expect(await json(call("PUT", `${base}/${key}`, { value: { name: "a" } }))).toEqual({ status: 200, body: { key, version: 1 } });
    expect(await json(call("GET", `${base}/${key}`))).toEqual({ status: 200, body: { key, value: { name: "a" }, version: 1 } });
    expect(await json(call("PUT", `${base}/${key}`, { value: [1, 2] }))).toEqual({ status: 200, body: { key, version: 2 } });
    expect(await json(call("GET", `${base}/${key}`))).toEqual({ status: 200, body: { key, value: [1, 2], version: 2 } });
  });

  it("answers 400 naming a bad key or body", async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ["PUT", `${base}/${"k".repeat(129)}`, { value: 1 }, /^key:/], // 129 characters
      ["PUT", `${base}/a%20b`, { value: 1 }, /^key:/], // a space
      ["GET", `${base}/a%2Fb`, undefined, /^key:/], // a slash, percent-encoded
      ["PUT", `${base}/ok`, { val: 1 }, /^body:/], // no value field
      ["PUT", `${base}/ok`, [1], /^body:/], // not an object
      ["POST", `${base}/bulk`, { count: 100_001 }, /^count:/], // over the limit
      ["POST", `${base}/bulk`, { count: 1.5, prefix: "p" }, /^count:/],
      ["POST", `${base}/bulk`, { count: 1, prefix: "bad prefix" }, /^prefix:/],
      ["DELETE", base, undefined, /^prefix:/], // teardown needs a prefix: never everything
    ];
    for (const [method, path, body, problem] of cases) {
      const { status, body: answer } = await json<{ problems: string[] }>(call(method, path, body));
      expect([method, path, status]).toEqual([method, path, 400]);
      expect(answer.problems).toEqual([expect.stringMatching(problem)]);
    }
  });

  it("accepts keys of 1 and 128 characters from the whole alphabet", async () => {
    for (const key of ["A", "aZ0_.:-".padEnd(128, "x")]) expect((await call("PUT", `${base}/${key}`, { value: null })).status).toBe(200);
  });

  it("bulk-creates N keys once (setup), idempotently, and deletes them by prefix (teardown)", async () => {
    const prefix = `${build}-key-`;
    expect(await json(call("POST", `${base}/bulk`, { count: 10_000, prefix }))).toEqual({ status: 200, body: { created: 10_000 } });
    expect(await json(call("GET", `${base}/${prefix}9999`))).toEqual({ status: 200, body: { key: `${prefix}9999`, value: { n: 9999 }, version: 1 } });
    expect((await call("GET", `${base}/${prefix}10000`)).status).toBe(404);

    // A written key keeps its history; repeating the setup restores the seed value with a new version only there.
    await call("PUT", `${base}/${prefix}7`, { value: "changed" });
    expect(await json(call("POST", `${base}/bulk`, { count: 10_000, prefix }))).toEqual({ status: 200, body: { created: 10_000 } });
    expect((await json<{ version: number }>(call("GET", `${base}/${prefix}9999`))).body.version).toBe(1);
    expect((await json(call("GET", `${base}/${prefix}7`))).body).toEqual({ key: `${prefix}7`, value: { n: 7 }, version: 3 });

    expect(await json(call("DELETE", `${base}?prefix=${prefix}`))).toEqual({ status: 200, body: { deleted: 10_000 } });
    expect((await call("GET", `${base}/${prefix}9999`)).status).toBe(404);
    expect(await json(call("POST", `${base}/bulk`, { count: 0, prefix }))).toEqual({ status: 200, body: { created: 0 } });
  });

  it("deletes by a literal prefix: `_` is not a wildcard", async () => {
    for (const key of [`${build}_a1`, `${build}xa1`, `${build}_b`]) await call("PUT", `${base}/${key}`, { value: 1 });
    expect(await json(call("DELETE", `${base}?prefix=${build}_a`))).toEqual({ status: 200, body: { deleted: 1 } });
    expect((await call("GET", `${base}/${build}xa1`)).status).toBe(200);
    expect((await call("GET", `${base}/${build}_b`)).status).toBe(200);
  });
});

describe("the v2 build's read cache", () => {
  it("answers what v1 answers, from the cache on the second read", async () => {
    await call("POST", "/app/v1/records/bulk", { count: 50, prefix: "same-" });
    const first = await call("GET", "/app/v2/records/same-42");
    expect(first.headers.get("x-cache")).toBe("miss");
    const second = await call("GET", "/app/v2/records/same-42");
    expect(second.headers.get("x-cache")).toBe("hit");
    const v1 = await (await call("GET", "/app/v1/records/same-42")).json();
    expect(await first.json()).toEqual(v1);
    expect(await second.json()).toEqual(v1);
    expect((await call("GET", "/app/v1/records/same-42")).headers.get("x-cache")).toBeNull(); // v1 has no cache
  });

  it("sees its own writes at once, through either build, and forgets deleted keys", async () => {
    await call("PUT", "/app/v2/records/own", { value: "a" });
    await call("GET", "/app/v2/records/own"); // cached
    await call("PUT", "/app/v2/records/own", { value: "b" });
    expect(await json(call("GET", "/app/v2/records/own"))).toEqual({ status: 200, body: { key: "own", value: "b", version: 2 } });
    await call("PUT", "/app/v1/records/own", { value: "c" });
    expect((await json(call("GET", "/app/v2/records/own"))).body).toEqual({ key: "own", value: "c", version: 3 });
    await call("DELETE", "/app/v1/records?prefix=own");
    expect((await call("GET", "/app/v2/records/own")).status).toBe(404);
  });

  it("shares one database read among concurrent misses of a hot key", async () => {
    await call("POST", "/app/v1/records/bulk", { count: 1, prefix: "hot-" }); // bulk leaves nothing cached
    const responses = await Promise.all(Array.from({ length: 8 }, () => call("GET", "/app/v2/records/hot-0")));
    const lookups = responses.map((r) => r.headers.get("x-cache"));
    expect(lookups.filter((l) => l === "miss")).toHaveLength(1);
    expect(lookups.filter((l) => l === "coalesced" || l === "hit")).toHaveLength(7);
    for (const r of responses) expect(await r.json()).toEqual({ key: "hot-0", value: { n: 0 }, version: 1 });
  });
});

describe("RecordCache (pure, explicit times)", () => {
  type Row = { readonly value: string; readonly version: number };
  const row = (value: string, version = 1): Row => ({ value, version });
  const loader = (value: Row | null) => {
    const calls = { n: 0 };
    return { calls, load: async () => (calls.n++, value) };
  };

  it("answers from the cache until the TTL, then loads again", async () => {
    const cache = new RecordCache<Row>({ capacity: 10, ttlMs: 1000 });
    const { calls, load } = loader(row("a"));
    expect((await cache.read("k", 0, load)).lookup).toBe("miss");
    expect((await cache.read("k", 999, load)).lookup).toBe("hit"); // 999 ms old: fresh
    expect((await cache.read("k", 1000, load)).lookup).toBe("miss"); // 1000 ms old: expired
    expect(calls.n).toBe(2);
    expect(cache.lookups).toEqual({ hit: 1, coalesced: 0, miss: 2 });
  });

  it("evicts the least recently read entry beyond its capacity", async () => {
    const cache = new RecordCache<Row>({ capacity: 2, ttlMs: 1000 });
    const { load } = loader(row("x"));
    await cache.read("a", 0, load);
    await cache.read("b", 0, load);
    await cache.read("a", 1, load); // a is now the most recent
    await cache.read("c", 2, load); // evicts b
    expect(cache.size).toBe(2);
    expect((await cache.read("a", 3, load)).lookup).toBe("hit");
    expect((await cache.read("b", 3, load)).lookup).toBe("miss");
  });

  it("does not cache absent keys, nor a load that a write overtook", async () => {
    const cache = new RecordCache<Row>({ capacity: 10, ttlMs: 1000 });
    expect((await cache.read("none", 0, loader(null).load)).value).toBeNull();
    expect((await cache.read("none", 1, loader(null).load)).lookup).toBe("miss");

    let finish!: (r: Row) => void;
    const slow = cache.read("k", 0, () => new Promise<Row>((resolve) => (finish = resolve)));
    cache.written("k", row("new", 2), 1); // the write lands while the read is in flight
    finish(row("old", 1));
    expect((await slow).value).toEqual(row("old", 1)); // its caller gets what it read…
    expect((await cache.read("k", 2, loader(row("db")).load)).value).toEqual(row("new", 2)); // …the cache keeps the write
  });

  it("keeps the newer of two writes that answered out of order, and drops a prefix", async () => {
    const cache = new RecordCache<Row>({ capacity: 10, ttlMs: 1000 });
    cache.written("k", row("v3", 3), 0);
    cache.written("k", row("v2", 2), 1); // the older write's answer came last
    expect((await cache.read("k", 2, loader(null).load)).value).toEqual(row("v3", 3));
    cache.invalidatePrefix("k");
    expect((await cache.read("k", 3, loader(null).load)).value).toBeNull();
  });
});

describe("records: numbered from, and listed with their versions", () => {
  it("creates keys from a given number and lists every key of a prefix with its version", async () => {
    expect(await json(call("POST", "/app/v1/records/bulk", { count: 3, prefix: "list-", from: 1 }))).toEqual({ status: 200, body: { created: 3 } });
    await call("PUT", "/app/v1/records/list-2", { value: "x" });
    expect(await json(call("GET", "/app/v1/records?prefix=list-"))).toEqual({
      status: 200,
      body: {
        records: [
          ["list-1", 1],
          ["list-2", 2],
          ["list-3", 1],
        ],
      },
    });
    expect((await call("POST", "/app/v1/records/bulk", { count: 1, from: -1 })).status).toBe(400);
  });
});
