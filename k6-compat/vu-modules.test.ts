/**
 * The k6 API a VU sees (runtime/vu-modules.ts and its helpers), in plain Node over a
 * scripted host: what a request becomes on the wire, what a response looks like to the
 * script, checks and metrics as samples, cookies, k6/crypto and k6/encoding against known
 * values, and the data handleSummary receives.
 */
import { describe, expect, it } from "vitest";
import { handleSummaryData } from "./handle-summary.ts";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { crypto } from "./runtime/crypto.ts";
import { parseHTML } from "./runtime/html.ts";
import { b64decode, b64encode } from "./runtime/encoding.ts";
import { fileKey } from "./runtime/file-key.ts";
import { createVuModules, sequence } from "./runtime/vu-modules.ts";
import type { IterationHost, Sample, WireRequest, WireResponse } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";

/** A string's UTF-8 bytes, as a request body crosses to the shard. */
const bytes = (text: string) => new TextEncoder().encode(text);

function vu(respond: (r: WireRequest) => Partial<WireResponse> = () => ({})) {
  const sent: Array<{ request: WireRequest; samples: readonly Sample[] }> = [];
  const slept: number[] = [];
  const host: IterationHost = {
    async send(samples, request) {
      sent.push({ request, samples });
      return {
        status: 200,
        error: null,
        headers: { "content-type": "application/json" },
        setCookies: [],
        body: '{"a":{"b":[1,2]}}',
        durationMs: 12,
        ...respond(request),
      };
    },
    async sleep(samples, ms) {
      slept.push(ms);
      sent.push({ request: null as never, samples });
    },
    ...noSockets,
  };
  const context = vuContext(host, { id: 3 });
  const modules = createVuModules(context) as Record<string, any>;
  return {
    http: modules["k6/http"],
    html: modules["k6/html"],
    k6: modules.k6,
    metrics: modules["k6/metrics"],
    exec: modules["k6/execution"],
    sent,
    slept,
    context,
  };
}

describe("k6/http", () => {
  it.each([
    // An object body is a form, as in k6.
    [
      (h: any) => h.post("http://127.0.0.1/x", { a: 1, b: "two" }),
      { method: "POST", body: bytes("a=1&b=two"), headers: { "Content-Type": "application/x-www-form-urlencoded" } },
    ],
    // An array in a form is its key repeated, keys in Go's order (url.Values), as k6 sends it.
    [
      (h: any) => h.post("http://127.0.0.1/x", { z: "last", topping: ["onion", "bacon"], a: "a b" }),
      { method: "POST", body: bytes("a=a+b&topping=onion&topping=bacon&z=last") },
    ],
    // Credentials in the URL are HTTP Basic authorization, as k6 (Go) sends them; the URL goes without them.
    [
      (h: any) => h.get("http://user:pass%40word@127.0.0.1/basic-auth"),
      { url: "http://127.0.0.1/basic-auth", headers: { Authorization: `Basic ${btoa("user:pass@word")}` } },
    ],
    // ...unless the request authorizes itself.
    [
      (h: any) => h.get("http://user:pass@127.0.0.1/x", { headers: { Authorization: "Bearer t" } }),
      { url: "http://127.0.0.1/x", headers: { Authorization: "Bearer t" } },
    ],
    // A string body goes as its UTF-8 bytes (a string would get fetch's text/plain), header names in Go's canonical form.
    [
      (h: any) => h.put("http://127.0.0.1/x", '{"k":"é"}', { headers: { "content-type": "application/json" } }),
      { method: "PUT", body: bytes('{"k":"é"}'), headers: { "Content-Type": "application/json", "User-Agent": "Grafana k6/1.8.1" } },
    ],
    // An ArrayBuffer body goes as it is, a typed array's view of one too.
    [(h: any) => h.post("http://127.0.0.1/x", new Uint8Array([0, 255, 7]).buffer), { body: new Uint8Array([0, 255, 7]) }],
    [(h: any) => h.post("http://127.0.0.1/x", new Uint8Array([9, 0, 255, 7]).subarray(1, 3)), { body: new Uint8Array([0, 255]) }],
    // del() is DELETE; redirects: 0 sees the redirect; responseType none drops the body.
    [(h: any) => h.del("http://127.0.0.1/x", null, { redirects: 0, responseType: "none" }), { method: "DELETE", maxRedirects: 0, readBody: false }],
    // expectedStatuses as a response callback: what counts as a failed request.
    [
      (h: any) => h.get("http://127.0.0.1/x", { responseCallback: h.expectedStatuses(200, { min: 301, max: 302 }) }),
      { method: "GET", expect: [200, 301, 302] },
    ],
    // The step a request is recorded under comes from its tags.
    [(h: any) => h.get("http://127.0.0.1/x", { tags: { name: "login" } }), { step: "login" }],
  ])("sends %#", async (call, wire) => {
    const v = vu();
    await call(v.http);
    expect(v.sent[0]!.request).toMatchObject(wire);
  });

  it("reads no body under options.discardResponseBodies unless a request names its responseType, as k6", async () => {
    const v = vu();
    v.context.discardsBodies = true; // the script's options.discardResponseBodies (entry.ts)
    await v.http.get("http://127.0.0.1/x");
    await v.http.get("http://127.0.0.1/x", { responseType: "text" });
    await v.http.get("http://127.0.0.1/x", { responseType: "none" });
    expect(v.sent.map((s) => s.request.readBody)).toEqual([false, true, false]);
    v.context.discardsBodies = false;
    await v.http.get("http://127.0.0.1/x");
    expect(v.sent[3]!.request.readBody).toBe(true);
  });

  it("limits redirects by params.redirects, else options.maxRedirects, else leaves k6's default to the shard", async () => {
    const v = vu();
    await v.http.get("http://127.0.0.1/x");
    expect(v.sent[0]!.request).not.toHaveProperty("maxRedirects");
    v.context.maxRedirects = 5; // the script's options.maxRedirects (entry.ts)
    await v.http.get("http://127.0.0.1/x");
    await v.http.get("http://127.0.0.1/x", { redirects: 1 });
    expect(v.sent.slice(1).map((s) => s.request.maxRedirects)).toEqual([5, 1]);
    await expect(v.http.get("http://127.0.0.1/x", { redirects: -1 })).rejects.toThrow(
      "params.redirects must be a whole number of redirects (0 or more), got -1",
    );
  });

  it("gives res.url as where the redirects led", async () => {
    const v = vu((r) => (r.url.endsWith("/redirect/1") ? { url: "http://127.0.0.1/get" } : {}));
    expect((await v.http.get("http://127.0.0.1/redirect/1")).url).toBe("http://127.0.0.1/get");
    expect((await v.http.get("http://127.0.0.1/x")).url).toBe("http://127.0.0.1/x");
  });

  it("gives the script k6's response: status, canonical headers, json() with a selector, timings", async () => {
    const v = vu();
    const res = await v.http.get("http://127.0.0.1/x");
    expect(res.status).toBe(200);
    expect(res.headers["Content-Type"]).toBe("application/json");
    expect(res.json("a.b.1")).toBe(2);
    expect(res.json()).toEqual({ a: { b: [1, 2] } });
    expect(res.timings.duration).toBe(12);
    expect(res.error_code).toBe(0);
  });

  it("parses a response as HTML with the parser the bundle installs, and says so when it was not bundled", async () => {
    const v = vu(() => ({ body: "<ul><li>a</li><li>b</li></ul>", headers: { "content-type": "text/html" } }));
    const res = await v.http.get("http://127.0.0.1/page");
    expect(() => res.html()).toThrow(/the HTML parser was not bundled with this script/);
    v.html.install(parseHTML);
    expect(res.html("li").size()).toBe(2);
    expect(res.html().find("li").last().text()).toBe("b");
  });

  it("reports a timeout as k6 does: status 0, error code 1050", async () => {
    const v = vu(() => ({ status: 0, error: "timeout", body: null }));
    const res = await v.http.get("http://127.0.0.1/x");
    expect([res.status, res.error_code, res.error]).toEqual([0, 1050, "request timeout"]);
  });

  it("runs a batch concurrently and keeps its keys", async () => {
    const v = vu((r) => ({ body: JSON.stringify({ url: r.url }) }));
    const out = await v.http.batch({ a: "http://127.0.0.1/a", b: ["POST", "http://127.0.0.1/b", "x"] });
    expect(out.a.json("url")).toBe("http://127.0.0.1/a");
    expect(v.sent.map((s) => s.request.method).sort()).toEqual(["GET", "POST"]);
  });

  it("refuses requests in the init context", async () => {
    const v = vu();
    v.context.host = null;
    await expect(v.http.get("http://127.0.0.1/x")).rejects.toThrow(/http.get\(\) in the init context/);
  });
});

describe("checks, metrics, sleep", () => {
  it("buffers checks and metric samples, and sends them with the next request or sleep", async () => {
    const v = vu();
    const trend = new v.metrics.Trend("t", true);
    const rate = new v.metrics.Rate("r");
    expect(v.k6.check({ status: 200 }, { ok: (r: any) => r.status === 200, bad: () => false })).toBe(false);
    trend.add(4.5);
    rate.add(0);
    await v.k6.sleep(0.25);
    expect(v.slept).toEqual([250]);
    // At the root, untagged: a check carries its name only, a metric's sample no tags (the shard adds the scenario).
    expect(v.sent[0]!.samples).toEqual([
      { type: "check", name: "ok", passed: true, tags: { check: "ok" } },
      { type: "check", name: "bad", passed: false, tags: { check: "bad" } },
      { type: "trend", name: "t", value: 4.5 },
      { type: "rate", name: "r", passed: false },
    ]);
  });

  it("tags checks, custom metrics and requests with what only the VU knows, as k6 does: the group path and the script's own tags", async () => {
    const v = vu();
    const counter = new v.metrics.Counter("c");
    // k6's add() returns true (issue 36: edgeload's returned undefined).
    expect(new v.metrics.Rate("r").add(1, { kind: "x" })).toBe(true);
    await v.k6.group("outer", async () => {
      await v.k6.group("inner", async () => {
        expect(counter.add(2, { staticAsset: "yes", n: 3 })).toBe(true);
        v.k6.check(1, { one: true }, { myTag: "x" });
        await v.http.get("http://127.0.0.1:9/a", { tags: { name: "home" } });
      });
    });
    await v.http.post("http://127.0.0.1:9/b");
    const [inner, outside] = v.sent;
    expect(inner!.samples).toEqual([
      { type: "rate", name: "r", passed: true, tags: { kind: "x" } },
      { type: "counter", name: "c", value: 2, tags: { group: "::outer::inner", staticAsset: "yes", n: "3" } },
      { type: "check", name: "one", passed: true, tags: { group: "::outer::inner", myTag: "x", check: "one" } },
    ]);
    expect(inner!.request.tags).toEqual({ name: "home", group: "::outer::inner" });
    // Back at the root after the groups, an untagged request carries no tags (the shard names it by its URL).
    expect(outside!.request.tags).toBeUndefined();
    // Each group's time, inner first, tagged with its path (k6's group_duration).
    expect(outside!.samples.map((s) => [s.type, "name" in s && s.name, "tags" in s && s.tags])).toEqual([
      ["trend", "group_duration", { group: "::outer::inner" }],
      ["trend", "group_duration", { group: "::outer" }],
    ]);
    await expect(v.k6.group("a::b", async () => {})).rejects.toThrow(/may not contain '::'/);
  });

  it("refuses a metric name k6 would refuse", () => {
    expect(() => new (vu().metrics.Counter)("1bad")).toThrow(/invalid metric name/);
  });

  it("runs forEach and map callbacks one after another", async () => {
    const order: number[] = [];
    const doubled = await sequence.map([3, 1, 2], async (n) => {
      await new Promise((r) => setTimeout(r, n));
      order.push(n);
      return n * 2;
    });
    expect(order).toEqual([3, 1, 2]);
    expect(doubled).toEqual([6, 2, 4]);
  });
});

describe("cookies", () => {
  it("keeps what a response sets for later requests to the same host and path", async () => {
    const v = vu((r) => (r.url.endsWith("/login") ? { setCookies: ["session=abc; Path=/; HttpOnly", "other=1; Path=/admin"] } : {}));
    const login = await v.http.post("http://127.0.0.1/login", "");
    expect(login.cookies.session[0]).toMatchObject({ value: "abc", http_only: true, path: "/" });
    await v.http.get("http://127.0.0.1/user");
    expect(v.sent[1]!.request.headers.Cookie).toBe("session=abc");
    // A Cookie header given comes first, the jar's after it (k6 v1.8.1 sends both); another
    // host gets nothing; an explicit jar is used instead.
    await v.http.get("http://127.0.0.1/user", { headers: { cookie: "mine=1" } });
    expect(v.sent[2]!.request.headers).toEqual({ Cookie: "mine=1; session=abc", "User-Agent": "Grafana k6/1.8.1" });
    await v.http.get("http://localhost/user");
    expect(v.sent[3]!.request.headers.Cookie).toBeUndefined();
    await v.http.get("http://127.0.0.1/user", { jar: new v.http.CookieJar() });
    expect(v.sent[4]!.request.headers.Cookie).toBeUndefined();
  });

  it("sends params.cookies as k6 v1.8.1 does: before the jar's, replacing a jar cookie only when asked, never kept", async () => {
    const v = vu();
    const u = "http://127.0.0.1/";
    v.http.cookieJar().set(u, "jar", "j1");
    v.http.cookieJar().set(u, "both", "fromjar");
    await v.http.get(u, { cookies: { a: "1", both: "req" } });
    await v.http.get(u, { cookies: { both: { value: "req", replace: true } } });
    await v.http.get(u);
    await v.http.get(u, { headers: { Cookie: "h=1" }, cookies: { a: "1" } });
    await v.http.get(u, { cookies: { n: 5, o: { value: "x" } } });
    // What k6 v1.8.1 sent for the same five requests (an echo of the Cookie header).
    expect(v.sent.map((s) => s.request.headers.Cookie)).toEqual([
      "a=1; both=req; jar=j1; both=fromjar",
      "both=req; jar=j1",
      "jar=j1; both=fromjar",
      "h=1; a=1; jar=j1; both=fromjar",
      "n=5; o=x; jar=j1; both=fromjar",
    ]);
    await expect(v.http.get(u, { cookies: "a=1" })).rejects.toThrow(/params\.cookies: an object of cookies/);
  });

  it("forgets a cookie a response expires", () => {
    const jar = new CookieJar();
    jar.receive("http://a.test/", ["s=1"]);
    expect(jar.cookiesForURL("http://a.test/x")).toEqual({ s: ["1"] });
    jar.receive("http://a.test/", ["s=; Max-Age=0"]);
    expect(jar.cookiesForURL("http://a.test/x")).toEqual({});
  });
});

describe("k6/crypto and k6/encoding", () => {
  it.each([
    // FIPS 180-2's "abc" vector.
    [crypto.sha256("abc", "hex"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    // RFC 4231-style HMAC of the pangram (Wikipedia's HMAC example).
    [crypto.hmac("sha256", "key", "The quick brown fox jumps over the lazy dog", "hex"), "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"],
    // PKCE S256 (RFC 7636 appendix B).
    [crypto.sha256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "base64rawurl"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"],
    [crypto.md5("", "hex"), "d41d8cd98f00b204e9800998ecf8427e"],
    [b64encode("ü?>", "rawurl"), "w7w_Pg"],
    [b64decode("w7w_Pg", "rawurl", "s"), "ü?>"],
  ])("%s", (actual, expected) => {
    expect(actual).toBe(expected);
  });

  it("gives a hasher's digest as often as asked, and goes on hashing after it, as k6 v1.8.1 does", () => {
    const h = crypto.createHash("sha256");
    h.update("ab");
    const first = h.digest("hex");
    expect(h.digest("hex")).toBe(first);
    expect(first).toBe(crypto.sha256("ab", "hex"));
    h.update("c");
    expect(h.digest("hex")).toBe(crypto.sha256("abc", "hex"));
    const m = crypto.createHMAC("sha256", "k");
    m.update("x");
    // k6 printed c38edc88… and then its base64 for the second digest.
    expect(m.digest("hex")).toBe("c38edc8815c8489f64738978f44008f8596345545f0baa68ef6fcf5c53e57189");
    expect(m.digest("base64")).toBe("w47ciBXISJ9kc4l49EAI+FljRVRfC6po72/PXFPlcYk=");
    m.update("y");
    expect(m.digest("hex")).toBe(crypto.hmac("sha256", "k", "xy", "hex"));
  });

  it("gives random bytes of the size asked", () => {
    expect(new Uint8Array(crypto.randomBytes(16)).length).toBe(16);
  });
});

describe("open() paths", () => {
  it.each([
    [".", "./users.json", "users.json"],
    ["lib", "../../presets/p.json", "../presets/p.json"],
    ["lib/x", "./a/../b.csv", "lib/x/b.csv"],
    [".", "/abs/file.txt", "/abs/file.txt"],
  ])("from %s, %s is %s", (dir, path, key) => {
    expect(fileKey(dir, path)).toBe(key);
  });
});

describe("handleSummaryData", () => {
  it("gives k6's data shape: type, contains, values, thresholds as {ok}", () => {
    const data = handleSummaryData(
      {
        state: { testRunDurationMs: 5000 },
        metrics: {
          http_reqs: { count: 10, rate: 2 },
          http_req_duration: { avg: 20, min: 10, med: 19, max: 40, "p(90)": 30, "p(95)": 35, thresholds: { "p(95)<30": true } },
          http_req_failed: { passes: 1, fails: 9, value: 0.1 },
          login_ms: { type: "trend", avg: 5, min: 1, med: 5, max: 9 },
          data_received: { count: 100, rate: 20 },
        },
      },
      new Set(["login_ms"]),
    ) as { metrics: Record<string, unknown>; state: unknown };
    expect(data.state).toEqual({ testRunDurationMs: 5000 });
    expect(data.metrics).toEqual({
      http_reqs: { type: "counter", contains: "default", values: { count: 10, rate: 2 } },
      http_req_duration: {
        type: "trend",
        contains: "time",
        values: { avg: 20, min: 10, med: 19, max: 40, "p(90)": 30, "p(95)": 35 },
        thresholds: { "p(95)<30": { ok: false } },
      },
      http_req_failed: { type: "rate", contains: "default", values: { rate: 0.1, passes: 1, fails: 9 } },
      login_ms: { type: "trend", contains: "time", values: { avg: 5, min: 1, med: 5, max: 9 } },
      data_received: { type: "counter", contains: "data", values: { count: 100, rate: 20 } },
    });
  });
});
