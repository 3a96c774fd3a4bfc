import { describe, expect, it } from "vitest";
import { makeBlockingCallsAwaited } from "./async-transform.ts";
import { isBlockingMember, isBlockingName } from "./modules.ts";

const roots = { isAsyncName: isBlockingName, isAsyncMember: isBlockingMember };
/** The transform of a bundle body (the init context is the outer arrow, as esbuild's iife). */
const transform = (body: string) => makeBlockingCallsAwaited(`var s = (() => {\n${body}\n})();`, roots);
const code = (body: string) => {
  const r = transform(body);
  if (!r.ok) throw new Error(r.problems.join("; "));
  return r.code.replace(/^var s = \(\(\) => \{\n|\n\}\)\(\);$/g, "");
};

describe("makeBlockingCallsAwaited", () => {
  it.each([
    // A named import that blocks is awaited, and its function becomes async.
    ["function f() { __k6async_http_get(u); }", "async function f() { (await __k6async_http_get(u)); }"],
    // Through the module's default object, and through esbuild's alias of it.
    [
      "var http = __k6asyncns_http; function f() { return http.get(u).json(); }",
      "var http = __k6asyncns_http; async function f() { return (await http.get(u)).json(); }",
    ],
    // A function already async keeps its one `async`; its blocking calls are awaited (it was `async async`, exit 107).
    ["async function f() { __k6async_http_get(u); }", "async function f() { (await __k6async_http_get(u)); }"],
    ["var f = async () => { __k6async_http_get(u); };", "var f = async () => { (await __k6async_http_get(u)); };"],
    // Non-blocking members of the same module stay as they are.
    ["function f() { __k6asyncns_http.expectedStatuses(200); }", "function f() { __k6asyncns_http.expectedStatuses(200); }"],
    // Colouring spreads to callers by name, then to theirs.
    [
      "function a() { __k6async_k6_sleep(1); } function b() { a(); } function c() { b(); }",
      "async function a() { (await __k6async_k6_sleep(1)); } async function b() { (await a()); } async function c() { (await b()); }",
    ],
    // Methods are reached by property name; `async` goes before the key.
    [
      "var o = { m() { __k6async_k6_sleep(1); } }; function f() { o.m(); }",
      "var o = { async m() { (await __k6async_k6_sleep(1)); } }; async function f() { (await o.m()); }",
    ],
    // An arrow passed to group() becomes async and group is awaited.
    [
      "function f() { __k6async_k6_group('g', () => __k6async_http_get(u)); }",
      "async function f() { (await __k6async_k6_group('g', async () => (await __k6async_http_get(u)))); }",
    ],
    // forEach with a blocking callback runs its callbacks in order.
    [
      "function f(xs) { xs.forEach((x) => __k6async_http_get(x)); }",
      "async function f(xs) { (await __k6seq.forEach(xs, async (x) => (await __k6async_http_get(x)))); }",
    ],
    // map over the result of an awaited call: the call closes before the rewrite.
    [
      "function f() { g().map((x) => __k6async_http_get(x)); } function g() { return [] }",
      "async function f() { (await __k6seq.map(g(), async (x) => (await __k6async_http_get(x)))); } function g() { return [] }",
    ],
    // A function that blocks nowhere is left alone, callbacks of map included.
    ["function f(xs) { return xs.map((x) => x * 2); }", "function f(xs) { return xs.map((x) => x * 2); }"],
    // Nested blocking calls each get their own await, the outer opening first.
    [
      "function f() { __k6async_http_get(__k6async_http_get(u).body); }",
      "async function f() { (await __k6async_http_get((await __k6async_http_get(u)).body)); }",
    ],
    // Class methods, static ones included.
    ["class C { static s() { __k6async_k6_sleep(1); } }", "class C { static async s() { (await __k6async_k6_sleep(1)); } }"],
    // A callback passed to the script's own function: the parameter that receives it is
    // awaited where it is called, so that function is async and awaited in turn.
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
    // A blocking function passed by name to forEach runs in order too.
    [
      "function get(x) { __k6async_http_get(x); } function f(xs) { xs.forEach(get); }",
      "async function get(x) { (await __k6async_http_get(x)); } async function f(xs) { (await __k6seq.forEach(xs, get)); }",
    ],
    // A jslib bundle as esbuild includes it (k6chaijs): it requires k6, so group is read
    // through k6's CommonJS view, and describe is reached through its export getter.
    [
      "var k6_exports = {}; __export(k6_exports, { group: () => __k6async_k6_group }); var lib = {}; __export(lib, { describe: () => yr });" +
        " var gr = (init_k6(), __toCommonJS(k6_exports)); function yr(s, o) { return (0, gr.group)(s, () => { o(); }); }" +
        " var chai = __toESM(require_chai()); function f() { (0, chai.describe)('x', () => __k6async_http_get(u)); }",
      "var k6_exports = {}; __export(k6_exports, { group: () => __k6async_k6_group }); var lib = {}; __export(lib, { describe: () => yr });" +
        " var gr = (init_k6(), __toCommonJS(k6_exports)); async function yr(s, o) { return (await (0, gr.group)(s, async () => { (await o()); })); }" +
        " var chai = __toESM(require_chai()); async function f() { (await (0, chai.describe)('x', async () => (await __k6async_http_get(u)))); }",
    ],
  ])("%s", (input, expected) => {
    expect(code(input)).toBe(expected);
  });

  it.each([
    // k6 forbids requests in the init context.
    ["__k6async_http_get(u);", /line 2 \(`get\(u\);`\): get\(\) in the init context/],
    // A callback the callee would not wait for.
    ["function f(xs) { return xs.filter((x) => __k6async_http_get(x).status === 200); }", /callback that makes requests or sleeps, passed to xs.filter\(\)/],
    ["function f() { setTimeout(() => __k6async_k6_sleep(1), 10); }", /passed to setTimeout\(\)/],
    // A function that keeps the callback for later would run it detached.
    ["function later(fn) { queue.push(fn); } function f() { later(() => __k6async_http_get(u)); }", /passed to later\(\)/],
    // Getters cannot be async.
    ["var o = { get x() { return __k6async_http_get(u); } };", /a getter that makes requests/],
  ])("refuses %s", (input, message) => {
    const r = transform(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toMatch(message);
  });
});
