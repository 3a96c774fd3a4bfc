/**
 * The async rewrite (async-transform.ts) on bundle-shaped code: what it writes, what the
 * rewritten code does when run over a stub k6 whose blocking functions return promises (as
 * the compat layer's do), and what it refuses. Each shape of issue 53 — a function reached
 * through a returned object, a property, a variable, a callback, a class, an array — is run
 * and must give k6's value with k6's requests, in k6's order.
 */
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { makeBlockingCallsAwaited } from "./async-transform.ts";
import { isBlockingMember, isBlockingName } from "./modules.ts";

const roots = { isAsyncName: isBlockingName, isAsyncMember: isBlockingMember };
/** The bundle around a body: the init context is the outer arrow, as esbuild's iife, and `f` its export. */
const wrap = (body: string) => `var s = (() => {\n${body}\nreturn { f };\n})();`;
const transform = (body: string) => makeBlockingCallsAwaited(wrap(body), roots);
/** The rewritten body alone (without the wrapper and the helpers appended after it). */
const code = (body: string) => {
  const r = transform(body);
  if (!r.ok) throw new Error(r.problems.join("; "));
  return r.code.slice("var s = (() => {\n".length, r.code.indexOf("\nreturn { f };"));
};

describe("makeBlockingCallsAwaited writes", () => {
  it.each([
    // A named import that blocks is awaited, and its function becomes async.
    ["function f() { __k6async_http_get(u); }", "async function f() { (await __k6async_http_get(u)); }"],
    // Through the module's default object, and through esbuild's alias of it.
    [
      "var http = __k6asyncns_http; function f() { return http.get(u).json(); }",
      "var http = __k6asyncns_http; async function f() { return (await http.get(u)).json(); }",
    ],
    // A function already async keeps its one `async`; its blocking calls are awaited.
    ["async function f() { __k6async_http_get(u); }", "async function f() { (await __k6async_http_get(u)); }"],
    // Non-blocking members of the same module stay as they are.
    ["function f() { __k6asyncns_http.expectedStatuses(200); }", "function f() { __k6asyncns_http.expectedStatuses(200); }"],
    // Colouring spreads to callers, then to theirs.
    [
      "function a() { __k6async_k6_sleep(1); } function b() { a(); } function f() { b(); }",
      "async function a() { (await __k6async_k6_sleep(1)); } async function b() { (await a()); } async function f() { (await b()); }",
    ],
    // A method: `async` goes before its key, static ones included.
    [
      "var o = { m() { __k6async_k6_sleep(1); } }; class C { static s() { __k6async_k6_sleep(1); } } function f() { o.m(); C.s(); }",
      "var o = { async m() { (await __k6async_k6_sleep(1)); } }; class C { static async s() { (await __k6async_k6_sleep(1)); } } async function f() { (await o.m()); (await C.s()); }",
    ],
    // A computed method: before its bracket.
    [
      "var k = 'm'; var o = { [k]() { __k6async_k6_sleep(1); } }; function f() { o[k](); }",
      "var k = 'm'; var o = { async [k]() { (await __k6async_k6_sleep(1)); } }; async function f() { (await o[k]()); }",
    ],
    // A helper's function returned in an object: the first shape.
    [
      "const api = (b) => { const get = function () { return __k6asyncns_http.get(b + '/get'); }; return { get }; }; function f() { return check(api(u).get(), {}); }",
      "const api = (b) => { const get = async function () { return (await __k6asyncns_http.get(b + '/get')); }; return { get }; }; async function f() { return check((await api(u).get()), {}); }",
    ],
    // An arrow passed to group() becomes async and group is awaited.
    [
      "function f() { __k6async_k6_group('g', () => __k6async_http_get(u)); }",
      "async function f() { (await __k6async_k6_group('g', async () => (await __k6async_http_get(u)))); }",
    ],
    // A WebSocket listener that sleeps becomes async: the socket waits for it before its next
    // event (runtime/websockets.ts); addEventListener itself returns nothing to await.
    [
      "function f(ws) { ws.addEventListener('open', () => { ws.send(1); __k6async_k6_sleep(0.2); }); }",
      "function f(ws) { ws.addEventListener('open', async () => { ws.send(1); (await __k6async_k6_sleep(0.2)); }); }",
    ],
    // forEach and map with a blocking callback run their callbacks one after another.
    [
      "function f(xs) { xs.forEach((x) => __k6async_http_get(x)); }",
      'async function f(xs) { (await __k6inOrder(xs, "forEach", async (x) => (await __k6async_http_get(x)))); }',
    ],
    [
      "function f() { g().map((x) => __k6async_http_get(x)); } function g() { return [] }",
      'async function f() { (await __k6inOrder(g(), "map", async (x) => (await __k6async_http_get(x)))); } function g() { return [] }',
    ],
    // A function that blocks nowhere is left alone, callbacks of map included.
    ["function f(xs) { return xs.map((x) => x * 2); }", "function f(xs) { return xs.map((x) => x * 2); }"],
    // Nested blocking calls each get their own await, the outer opening first.
    [
      "function f() { __k6async_http_get(__k6async_http_get(u).body); }",
      "async function f() { (await __k6async_http_get((await __k6async_http_get(u)).body)); }",
    ],
    // A callback passed to the script's own function is awaited where it is called.
    [
      "function d(n, fn) { fn(); } function f() { d('x', () => __k6async_http_get(u)); }",
      "async function d(n, fn) { (await fn()); } async function f() { (await d('x', async () => (await __k6async_http_get(u)))); }",
    ],
    // Handed on to another function, and called through .call().
    [
      "function a(fn) { b(fn); } function b(g) { g.call(null); } function f() { a(() => __k6async_k6_sleep(1)); }",
      "async function a(fn) { (await b(fn)); } async function b(g) { (await g.call(null)); } async function f() { (await a(async () => (await __k6async_k6_sleep(1)))); }",
    ],
    // An inner parameter of the same name is another value: not awaited.
    [
      "function d(fn) { fn(); [1].forEach((fn) => fn); } function f() { d(() => __k6async_k6_sleep(1)); }",
      "async function d(fn) { (await fn()); [1].forEach((fn) => fn); } async function f() { (await d(async () => (await __k6async_k6_sleep(1)))); }",
    ],
    // A method of an object that happens to be called `call` is that method, not Function.prototype.call.
    [
      "const rpc = { call(p) { return __k6async_http_get(p); } }; function f() { return rpc.call('/x'); }",
      "const rpc = { async call(p) { return (await __k6async_http_get(p)); } }; async function f() { return (await rpc.call('/x')); }",
    ],
    // The same name in another helper is another function: `get` of a Map is not awaited.
    [
      "const api = { get: () => __k6async_http_get(u) }; function f() { const m = new Map(); m.set('a', 1); return [api.get(), m.get('a')]; }",
      "const api = { get: async () => (await __k6async_http_get(u)) }; async function f() { const m = new Map(); m.set('a', 1); return [(await api.get()), m.get('a')]; }",
    ],
    // k6/execution escaping (kept in a Map) has nothing that blocks: a call of an unknown value stays as written.
    [
      "const kept = new Map(); kept.set('e', __k6asyncns_execution); function f(r) { __k6async_http_get(u); return kept.get('e').vu(r.json()); }",
      "const kept = new Map(); kept.set('e', __k6asyncns_execution); async function f(r) { (await __k6async_http_get(u)); return kept.get('e').vu(r.json()); }",
    ],
    // ... where k6/http escaping does: any `get` of a value from the Map may be http.get, the
    // Map's own included: when in doubt, awaited (awaiting the Map's answer only yields).
    [
      "const kept = new Map(); kept.set('h', __k6asyncns_http); function f() { return kept.get('h').get(u); }",
      "const kept = new Map(); kept.set('h', __k6asyncns_http); async function f() { return (await (await kept.get('h')).get(u)); }",
    ],
    // A call the author awaited is not awaited twice.
    [
      "async function f() { const r = await __k6async_http_get(u); return await g?.(); } function g() { return __k6async_http_get(u); }",
      "async function f() { const r = await __k6async_http_get(u); return await g?.(); } async function g() { return (await __k6async_http_get(u)); }",
    ],
    // A call of an author's async function returns its promise under k6 too: left as written.
    [
      "async function g() { return __k6async_http_get(u); } function f() { const p = g(); return p; }",
      "async function g() { return (await __k6async_http_get(u)); } function f() { const p = g(); return p; }",
    ],
  ])("%s", (input, expected) => {
    expect(code(input)).toBe(expected);
  });

  it("adds no line before the bundle's last, so errors' lines still map to the script", () => {
    const body = "function f(xs) {\n  xs.forEach((x) => __k6async_http_get(x));\n  return new Map([[1, 2]]).get(1);\n}";
    const r = transform(body);
    if (!r.ok) throw new Error(r.problems.join("; "));
    const before = wrap(body).split("\n");
    const after = r.code.split("\n");
    // Each line keeps its words, in order, with the rewrite's between them.
    const words = (line: string): string[] => line.match(/\w+/g) ?? [];
    before.forEach((line, i) => {
      const kept = words(after[i]!).filter((w) => !["async", "await", "__k6inOrder", "forEach"].includes(w) || words(line).includes(w));
      expect(kept).toEqual(words(line));
    });
  });

  it("appends its helpers only when the code uses them", () => {
    const plain = transform("function f() { __k6async_http_get(u); }");
    const inOrder = transform("function f(xs) { xs.forEach((x) => __k6async_http_get(x)); }");
    expect(plain.ok && plain.code.includes("__k6inOrder")).toBe(false);
    expect(inOrder.ok && inOrder.code.includes("async function __k6inOrder(")).toBe(true);
  });
});

/** A stub k6 for the rewritten code: requests resolve after a timer, as over RPC, and are recorded. */
function stubK6() {
  const requests: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const request = (method: string) => (url: string) => {
    requests.push(`${method} ${url}`);
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    return new Promise((resolve) =>
      setTimeout(() => {
        inFlight--;
        resolve({ status: 200, url, json: () => ({ path: url, token: `token for ${url}` }) });
      }, 2),
    );
  };
  const http = { get: request("GET"), post: request("POST") };
  const checks: boolean[] = [];
  const k6 = {
    check: (value: unknown, sets: Record<string, (v: unknown) => unknown>) => {
      for (const predicate of Object.values(sets)) checks.push(predicate(value) === true);
      return checks.every(Boolean);
    },
    sleep: () => new Promise((resolve) => setTimeout(resolve, 1)),
    group: async (_name: string, fn: () => unknown) => await fn(),
  };
  const globals = {
    __k6asyncns_http: http,
    __k6async_http_get: http.get,
    __k6async_http_post: http.post,
    __k6asyncns_k6: k6,
    __k6async_k6_sleep: k6.sleep,
    __k6async_k6_group: k6.group,
    __ENV: { BASE_URL: "http://target" },
    setTimeout,
  };
  return { globals, requests, checks, mostInFlight: () => mostInFlight };
}

/** Rewrites `body`, runs it over the stub, and calls its `f`. */
async function run(body: string) {
  const r = transform(body);
  if (!r.ok) throw new Error(r.problems.join("; "));
  const k6 = stubK6();
  const context = vm.createContext({ ...k6.globals });
  vm.runInContext(r.code, context);
  const value = await (context.s as { f: () => unknown }).f();
  return { value, ...k6 };
}

describe("the rewritten code, run over a k6 whose requests are promises", () => {
  it.each([
    // Issue 53: a factory's function returned in an object, called through it, checked.
    [
      "factory returning an object",
      "const api = (b) => { const get = function () { return __k6asyncns_http.get(b + '/get'); }; return { get }; };" +
        " function f() { return __k6asyncns_k6.check(api(__ENV.BASE_URL).get(), { s: (r) => r.status === 200 }); }",
      true,
      ["GET http://target/get"],
    ],
    // Issue 53: a factory returning { login } that posts, its response's json read.
    [
      "factory login",
      "function makeAuth(base) { return { login(user, pass) { return __k6asyncns_http.post(base + '/login', { user, pass }); } }; }" +
        " const auth = makeAuth(__ENV.BASE_URL); function f() { const r = auth.login('a', 'b'); return r.json().token; }",
      "token for http://target/login",
      ["POST http://target/login"],
    ],
    // A method reached through `this`.
    [
      "property call through this",
      "const client = { base: 'http://t', get(p) { return __k6async_http_get(this.base + p); }, page() { return this.get('/page').status; } };" +
        " function f() { return client.page(); }",
      200,
      ["GET http://t/page"],
    ],
    // Another name for http.get, and another for that.
    ["variable alias", "const g = __k6asyncns_http.get; const h = g; function f() { return h('/a').status; }", 200, ["GET /a"]],
    // A callback the script's own helper calls, twice.
    [
      "callback",
      "function retry(fn) { const r = fn(); return r.status === 200 ? r : fn(); } function f() { return retry(() => __k6async_http_get('/a')).url; }",
      "/a",
      ["GET /a"],
    ],
    // A class's method, on an instance made with new.
    [
      "class method",
      "class Api { constructor(base) { this.base = base; } get(p) { return __k6async_http_get(this.base + p); } } function f() { return new Api('http://c').get('/x').status; }",
      200,
      ["GET http://c/x"],
    ],
    // A subclass's method calling its parent's through super.
    [
      "subclass through super",
      "class Base { get(p) { return __k6async_http_get(p); } } class Api extends Base { get(p) { return super.get('/v1' + p); } } function f() { return new Api().get('/x').url; }",
      "/v1/x",
      ["GET /v1/x"],
    ],
    // forEach's callbacks run one after another, in order.
    [
      "forEach callback",
      "function f() { const out = []; ['/a', '/b', '/c'].forEach((p) => out.push(__k6async_http_get(p).url)); return out; }",
      ["/a", "/b", "/c"],
      ["GET /a", "GET /b", "GET /c"],
    ],
    // map over a Map: its own forEach's arguments (value, key), in its order.
    [
      "Map.forEach callback",
      "const paths = new Map([['x', '/a'], ['y', '/b']]); function f() { const out = []; paths.forEach((p, k) => out.push(k + __k6async_http_get(p).url)); return out; }",
      ["x/a", "y/b"],
      ["GET /a", "GET /b"],
    ],
    // Functions in an array, handed to map's callback by the builtin.
    [
      "array element",
      "const steps = [() => __k6async_http_get('/a'), () => __k6async_http_get('/b')]; function f() { return steps.map((s) => s().status); }",
      [200, 200],
      ["GET /a", "GET /b"],
    ],
    // ... and through for…of.
    [
      "for…of over functions",
      "const steps = []; steps.push(() => __k6async_http_get('/a')); function f() { let n = 0; for (const s of steps) n += s().status; return n; }",
      200,
      ["GET /a"],
    ],
    // A function kept in a Map and called back from it: escaped, so a call of what the Map gives is awaited.
    [
      "function kept by a builtin",
      "const handlers = new Map(); handlers.set('a', () => __k6async_http_get('/a')); function f() { return handlers.get('a')().status; }",
      200,
      ["GET /a"],
    ],
    // Written async by the author: its awaits are added inside; a caller gets its promise, as in k6.
    ["already-async function", "async function f() { const r = __k6async_http_get('/a'); return r.status; }", 200, ["GET /a"]],
    // An arrow whose body is the request.
    ["arrow returning http.get", "const get = (p) => __k6asyncns_http.get(p); function f() { return get('/a').status; }", 200, ["GET /a"]],
    // Functions called where they are written.
    [
      "IIFE",
      "function f() { return (() => __k6async_http_get('/a'))().status + (function () { return __k6async_http_get('/b'); })().status; }",
      400,
      ["GET /a", "GET /b"],
    ],
    // group's callback, awaited by group.
    ["group callback", "function f() { return __k6async_k6_group('g', () => __k6async_http_get('/a').status); }", 200, ["GET /a"]],
  ])("%s", async (_name, body, value, requests) => {
    const ran = await run(body);
    expect(ran.value).toEqual(value);
    expect(ran.requests).toEqual(requests);
    // One request at a time, as a k6 VU sends them.
    expect(ran.mostInFlight()).toBe(1);
    expect(ran.checks.every(Boolean)).toBe(true);
  });

  it("awaits a call that only may return a promise at no more than a microtask's cost", async () => {
    // m.get may be the escaped arrow (kept in one Map) or not: awaited both times, right both times.
    const ran = await run(
      "const kept = new Map(); kept.set('a', () => __k6async_http_get('/a')); function f() { const m = new Map([['b', () => 7]]); return [kept.get('a')().status, m.get('b')()]; }",
    );
    expect(ran.value).toEqual([200, 7]);
  });

  it("throws with the call's line where a function that cannot wait gets a promise from a path it could not follow", async () => {
    const body = [
      "const kept = new Map(); kept.set('a', () => __k6async_http_get('/a'));",
      "function f() {",
      "  return __k6asyncns_k6.check(null, { ok: () => kept.get('a')().status === 200 });",
      "}",
    ].join("\n");
    const error = await run(body).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/^a call gave a promise in a callback passed to __k6asyncns_k6\.check\(\), which cannot wait for it/);
    // The first frame is the call's own line (line 4 of the bundle: 1 is the wrapper's).
    expect(error?.stack?.split("\n")[1]).toMatch(/:4:/);
  });
});

describe("makeBlockingCallsAwaited refuses", () => {
  it.each([
    // k6 forbids requests in the init context.
    ["__k6async_http_get(u); function f() {}", /line 2 \(`get\(u\); function f\(\) \{\}`\): get\(\) in the init context/],
    // ... also through a helper the init context calls.
    ["function load() { return __k6async_http_get(u); } const data = load(); function f() {}", /load\(\) in the init context/],
    // A callback the callee would not wait for.
    ["function f(xs) { return xs.filter((x) => __k6async_http_get(x).status === 200); }", /callback that makes requests or sleeps, passed to xs.filter\(\)/],
    ["function f() { setTimeout(() => __k6async_k6_sleep(1), 10); }", /passed to setTimeout\(\)/],
    // check's functions are run as check is: they cannot wait.
    ["function f() { __k6asyncns_k6.check(1, { ok: () => __k6async_http_get(u).status === 200 }); }", /passed to __k6asyncns_k6.check\(\)/],
    // Getters, setters and constructors cannot be async.
    ["var o = { get x() { return __k6async_http_get(u); } }; function f() { return o.x; }", /a getter that makes requests or sleeps is not supported/],
    [
      "class C { constructor() { this.r = __k6async_http_get(u); } } function f() { return new C(); }",
      /a constructor that makes requests or sleeps is not supported/,
    ],
    ["class C { r = __k6async_http_get(u); } function f() { return new C(); }", /a class's field initialisers that makes requests or sleeps/],
    // A generator would yield promises where k6 yields responses.
    ["function* g() { yield __k6async_http_get(u); } function f() { return [...g()]; }", /a generator function that makes requests or sleeps/],
  ])("%s", (input, message) => {
    const r = transform(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toMatch(message);
  });
});
