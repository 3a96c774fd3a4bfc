/**
 * The async rewrite's property keys (async-transform-keys.ts) and the rules that keep a
 * minified webpack bundle's modules apart (issue 53, k6chaijs 4.3.4.0): an array literal's
 * elements by index, a small function's copy that knows the literal its call gives, a
 * variable read in its own assignment, a for-in copy, a well-known symbol key, `Object(f)`;
 * and for its ajv and chai modules, a conditional key of literals and a copy's parameter in a
 * function that only reads `arguments`.
 * Each row says what the rewrite writes; "awaited" rows are the sound side of each rule (a
 * key not known reads every field).
 */
import { describe, expect, it } from "vitest";
import { rewriteBody } from "../test/support/async-rewrite-body.ts";

const rewrite = rewriteBody;

const FNS = "var fns = [() => __k6async_k6_sleep(1), () => 1];";
const FNS_ASYNC = "var fns = [async () => (await __k6async_k6_sleep(1)), () => 1];";

describe("an array literal's elements by index", () => {
  it.each([
    // Element 1 does not block: its call is left alone, and f stays synchronous.
    [`${FNS} function f() { return fns[1](); }`, `${FNS_ASYNC} function f() { return fns[1](); }`],
    // Element 0 blocks: awaited.
    [`${FNS} function f() { return fns[0](); }`, `${FNS_ASYNC} async function f() { return (await fns[0]()); }`],
    // An index known only at run time may be any element: awaited.
    [`${FNS} function f(i) { return fns[i](); }`, `${FNS_ASYNC} async function f(i) { return (await fns[i]()); }`],
    // After a spread an element's index is not known: every index may be it.
    [
      "var fns = [...[() => 1], () => __k6async_k6_sleep(1)]; function f() { return fns[0](); }",
      "var fns = [...[() => 1], async () => (await __k6async_k6_sleep(1))]; async function f() { return (await fns[0]()); }",
    ],
    // Iterating gives every element.
    [`${FNS} function f() { for (const g of fns) g(); }`, `${FNS_ASYNC} async function f() { for (const g of fns) (await g()); }`],
  ])("%s", (input, expected) => {
    expect(rewrite(input)).toBe(expected);
  });
});

describe("a copy's parameter given a literal", () => {
  it.each([
    // pick(1) reads element 1 only.
    [
      `${FNS} function pick(i) { return fns[i]; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { return fns[i]; } function f() { return pick(1)(); }`,
    ],
    // pick(0) reads element 0.
    [
      `${FNS} function pick(i) { return fns[i]; } function f() { return pick(0)(); }`,
      `${FNS_ASYNC} function pick(i) { return fns[i]; } async function f() { return (await pick(0)()); }`,
    ],
    // A parameter something assigns is not the literal any more.
    [
      `${FNS} function pick(i) { i = i - 1; return fns[i]; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { i = i - 1; return fns[i]; } async function f() { return (await pick(1)()); }`,
    ],
    // A function reading `arguments` may change its parameters through it (sloppy code).
    [
      `${FNS} function pick(i) { arguments[0] = 0; return fns[i]; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { arguments[0] = 0; return fns[i]; } async function f() { return (await pick(1)()); }`,
    ],
  ])("%s", (input, expected) => {
    expect(rewrite(input)).toBe(expected);
  });
});

describe("a parameter no call gives a value", () => {
  it.each([
    // Never called: its key is undefined, which names none of o's fields.
    [
      "var o = { a: () => __k6async_k6_sleep(1) }; function never(k) { return o[k](); } function f() {}",
      "var o = { a: async () => (await __k6async_k6_sleep(1)) }; function never(k) { return o[k](); } function f() {}",
    ],
    // Given a value: any field.
    [
      "var o = { a: () => __k6async_k6_sleep(1) }; function g(k) { return o[k](); } function f(x) { return g(x); }",
      "var o = { a: async () => (await __k6async_k6_sleep(1)) }; async function g(k) { return (await o[k]()); } async function f(x) { return (await g(x)); }",
    ],
  ])("%s", (input, expected) => {
    expect(rewrite(input)).toBe(expected);
  });

  it("keeps a minified webpack bundle's modules apart: require(1) gives module 1's exports only", () => {
    // webpack 4's runtime, minified (as k6chaijs 4.3.4.0 has it), and two modules.
    const bundle = [
      "var lib = (function (mods) { var cache = {};",
      "function req(id) { if (cache[id]) return cache[id].exports; var m = cache[id] = { i: id, l: false, exports: {} }; return mods[id].call(m.exports, m, m.exports, req), m.l = true, m.exports; }",
      "return req.m = mods, req.c = cache, req.d = function (e, k, g) { req.o(e, k) || Object.defineProperty(e, k, { enumerable: true, get: g }); },",
      "req.r = function (e) { Object.defineProperty(e, '__esModule', { value: true }); },",
      "req.o = function (e, k) { return Object.prototype.hasOwnProperty.call(e, k); }, req.p = '', req(req.s = 1); })([",
      "function (e, t) { t.describe = function () { __k6async_k6_sleep(1); }; },",
      "function (e, t, n) { n.r(t), n.d(t, 'describe', function () { return d; }); var other = n(0); function d(name, fn) { return fn(); } } ]);",
      "function f() { return lib.describe('x', () => 1); }",
    ].join("\n");
    // Read index-insensitively, require(1) would run module 0 too, on module 1's exports: its
    // describe, which sleeps, would be a possible lib.describe, and f's call awaited. require's
    // own body, run as no copy, has an id no call gives: it runs no module.
    expect(rewrite(bundle)).toContain("\nfunction f() { return lib.describe('x', () => 1); }");
  });
});

describe("the other rules a webpack bundle needs", () => {
  it.each([
    // `e = e()` calls what e held before: the factory, not the sleeping function it returns
    // (else a sleep in the init context).
    [
      "var e = function () { return function () { __k6async_k6_sleep(1); }; }; e = e(); function f() { e(); }",
      "var e = function () { return async function () { (await __k6async_k6_sleep(1)); }; }; e = e(); async function f() { (await e()); }",
    ],
    // In a loop the assignment's reads may see its own earlier result: not split.
    ["var e = function () { return function () { __k6async_k6_sleep(1); }; }; for (var i = 0; i < 2; i++) e = e(); function f() {}", "refused:"],
    // for (k in src) dst[k] = src[k] copies by name: dst.b is src.b only.
    [
      "var src = { a: () => __k6async_k6_sleep(1), b: () => 1 }; var dst = {}; for (var k in src) dst[k] = src[k]; function f() { return dst.b(); }",
      "var src = { a: async () => (await __k6async_k6_sleep(1)), b: () => 1 }; var dst = {}; for (var k in src) dst[k] = src[k]; function f() { return dst.b(); }",
    ],
    // ... and dst.a is src.a.
    [
      "var src = { a: () => __k6async_k6_sleep(1) }; var dst = {}; for (var k in src) dst[k] = src[k]; function f() { return dst.a(); }",
      "var src = { a: async () => (await __k6async_k6_sleep(1)) }; var dst = {}; for (var k in src) dst[k] = src[k]; async function f() { return (await dst.a()); }",
    ],
    // ajv's util.copy, `for (k in to = to || {}, from)`: the sequence's last is the source, copied by name.
    [
      "var src = { a: () => __k6async_k6_sleep(1), b: () => 1 }; function copy(from, to) { for (var k in to = to || {}, from) to[k] = from[k]; return to; } var dst = copy(src); function f() { return dst.b(); }",
      "var src = { a: async () => (await __k6async_k6_sleep(1)), b: () => 1 }; function copy(from, to) { for (var k in to = to || {}, from) to[k] = from[k]; return to; } var dst = copy(src); function f() { return dst.b(); }",
    ],
    // A well-known symbol is no string key: o[Symbol.iterator] is not o.a.
    [
      "var o = { a: () => __k6async_k6_sleep(1) }; function f() { if (o[Symbol.iterator]) o[Symbol.iterator](); }",
      "var o = { a: async () => (await __k6async_k6_sleep(1)) }; function f() { if (o[Symbol.iterator]) o[Symbol.iterator](); }",
    ],
    // ... but what a literal defines under it is found.
    [
      "var o = { [Symbol.iterator]: () => __k6async_k6_sleep(1) }; function f() { o[Symbol.iterator](); }",
      "var o = { [Symbol.iterator]: async () => (await __k6async_k6_sleep(1)) }; async function f() { (await o[Symbol.iterator]()); }",
    ],
    // A function constructor cannot become async (it would lose its prototype and `new`):
    // it is pinned, and a call in it that may block only checked at run time.
    [
      "function A(g) { g(); } A.prototype.m = function () {}; function f(x) { return new A(x); } function h() { f(() => __k6async_k6_sleep(1)); }",
      "refused: a function called with new",
    ],
    // Object(g) is g: its call is awaited like g's.
    [
      "function g() { __k6async_k6_sleep(1); } function f() { Object(g)(); }",
      "async function g() { (await __k6async_k6_sleep(1)); } async function f() { (await Object(g)()); }",
    ],
  ])("%s", (input, expected) => {
    const out = rewrite(input);
    if (expected === "refused:") expect(out).toMatch(/^refused: .*in the init context/);
    else if (expected.startsWith("refused: ")) expect(out).toContain(expected.slice("refused: ".length));
    else expect(out).toBe(expected);
  });
});

/** An object in a Map (which keeps what it holds out of sight): `m.get(1)` is any such object. */
const HELD = "var o = { a: () => __k6async_k6_sleep(1), b: () => 1 }; var m = new Map(); m.set(1, o);";
const HELD_ASYNC = "var o = { a: async () => (await __k6async_k6_sleep(1)), b: () => 1 }; var m = new Map(); m.set(1, o);";

describe("a conditional key of literals reads those fields only", () => {
  it.each([
    // o[x ? "b" : "c"] is o.b or o.c: neither blocks.
    [
      'var o = { a: () => __k6async_k6_sleep(1), b: () => 1, c: () => 1 }; function f(x) { return o[x ? "b" : "c"](); }',
      'var o = { a: async () => (await __k6async_k6_sleep(1)), b: () => 1, c: () => 1 }; function f(x) { return o[x ? "b" : "c"](); }',
    ],
    // One branch names the blocking field: awaited.
    [
      'var o = { a: () => __k6async_k6_sleep(1), b: () => 1, c: () => 1 }; function f(x) { return o[x ? "c" : "a"](); }',
      'var o = { a: async () => (await __k6async_k6_sleep(1)), b: () => 1, c: () => 1 }; async function f(x) { return (await o[x ? "c" : "a"]()); }',
    ],
    // A branch known only at run time may be any field: awaited.
    [
      'var o = { a: () => __k6async_k6_sleep(1), b: () => 1 }; function f(x, k) { return o[x ? "b" : k](); }',
      'var o = { a: async () => (await __k6async_k6_sleep(1)), b: () => 1 }; async function f(x, k) { return (await o[x ? "b" : k]()); }',
    ],
    // On a value from unseen code (ajv's `it.util[…]`), the escaped objects' b or c: neither blocks.
    [`${HELD} function f(x) { return m.get(1)[x ? "b" : "c"](); }`, `${HELD_ASYNC} function f(x) { return m.get(1)[x ? "b" : "c"](); }`],
    // ... and their a, which does: awaited.
    [`${HELD} function f(x) { return m.get(1)[x ? "a" : "c"](); }`, `${HELD_ASYNC} async function f(x) { return (await m.get(1)[x ? "a" : "c"]()); }`],
    // A store under a conditional key may be either field: o.b may then hold the blocking function.
    [
      'var o = { b: () => 1 }; o[Math.random() ? "b" : "c"] = () => __k6async_k6_sleep(1); function f() { return o.b(); }',
      'var o = { b: () => 1 }; o[Math.random() ? "b" : "c"] = async () => (await __k6async_k6_sleep(1)); async function f() { return (await o.b()); }',
    ],
  ])("%s", (input, expected) => {
    expect(rewrite(input)).toBe(expected);
  });

  it("adds up the names each copy of a call calls on a value from unseen code", () => {
    // g("b") then g("a"): the one call in g reads b in a copy, a in the other; a blocks.
    expect(rewrite(`${HELD} function g(k) { return m.get(1)[k](); } function f() { g("b"); return g("a"); }`)).toBe(
      `${HELD_ASYNC} async function g(k) { return (await m.get(1)[k]()); } async function f() { (await g("b")); return (await g("a")); }`,
    );
    // g("b") alone: b only.
    expect(rewrite(`${HELD} function g(k) { return m.get(1)[k](); } function f() { return g("b"); }`)).toBe(
      `${HELD_ASYNC} function g(k) { return m.get(1)[k](); } function f() { return g("b"); }`,
    );
  });
});

describe("a copy's parameter, when its function only reads `arguments`", () => {
  it.each([
    // chai's flag(obj, key, value) counts its arguments: pick(1) still reads element 1 only.
    [
      `${FNS} function pick(i) { if (arguments.length !== 1) return null; return fns[i]; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { if (arguments.length !== 1) return null; return fns[i]; } function f() { return pick(1)(); }`,
    ],
    // Reading an argument by index writes nothing either.
    [
      `${FNS} function pick(i) { return arguments[0] === 1 ? fns[i] : null; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { return arguments[0] === 1 ? fns[i] : null; } function f() { return pick(1)(); }`,
    ],
    // Handed on, `arguments` may be written where it goes: the key is not known.
    [
      `${FNS} function pick(i) { console.log(arguments); return fns[i]; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { console.log(arguments); return fns[i]; } async function f() { return (await pick(1)()); }`,
    ],
    // arguments[2]() runs a function with `arguments` as its `this`, which may write it.
    [
      `${FNS} function pick(i) { arguments[2](); return fns[i]; } function f() { return pick(1, 0, function () { this[0] = 0; })(); }`,
      `${FNS_ASYNC} function pick(i) { arguments[2](); return fns[i]; } async function f() { return (await pick(1, 0, function () { this[0] = 0; })()); }`,
    ],
    // Updated in place: written.
    [
      `${FNS} function pick(i) { arguments[0]--; return fns[i]; } function f() { return pick(1)(); }`,
      `${FNS_ASYNC} function pick(i) { arguments[0]--; return fns[i]; } async function f() { return (await pick(1)()); }`,
    ],
  ])("%s", (input, expected) => {
    expect(rewrite(input)).toBe(expected);
  });
});
