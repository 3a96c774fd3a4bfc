/**
 * What escapes to code the async rewrite does not see (async-transform-calls.ts,
 * async-transform-heap.ts), for k6chaijs's bundle (issue 53): esbuild's `(0, mod.expect)(…)`
 * passes no `this`, so a call of an unknown import does not hand its module object on; and a
 * getter `Object.defineProperty` installs gives its result to the property, not to unseen
 * code. Either way k6chaijs's `describe`, which blocks, escaped, and then every call of a
 * value from unseen code in the bundle (hundreds in ajv and chai) might have been it.
 * `box` below is such a place: `box.run` is whatever escaped.
 */
import { describe, expect, it } from "vitest";
import { rewriteBody } from "../test/support/async-rewrite-body.ts";

const rewrite = rewriteBody;

/** An object unseen code holds (a Map keeps it), and a call of what it may hold. */
const BOX = "var box = {}; new Map().set(1, box);";
const RUN = "function f() { var run = box.run; return run(); }";
const RUN_AWAITED = "async function f() { var run = box.run; return (await run()); }";

describe("what escapes to unseen code", () => {
  it.each([
    // (0, mod.expect)(1) runs an unknown function with no `this`: mod, and its sleeping describe, stay seen.
    [
      `${BOX} var mod = { describe: () => __k6async_k6_sleep(1), expect: box.fn }; function f() { (0, mod.expect)(1); var run = box.run; return run(); }`,
      `${BOX} var mod = { describe: async () => (await __k6async_k6_sleep(1)), expect: box.fn }; function f() { (0, mod.expect)(1); var run = box.run; return run(); }`,
    ],
    // mod.expect(1) passes mod as `this`: describe escapes, and run may be it.
    [
      `${BOX} var mod = { describe: () => __k6async_k6_sleep(1), expect: box.fn }; function f() { mod.expect(1); var run = box.run; return run(); }`,
      `${BOX} var mod = { describe: async () => (await __k6async_k6_sleep(1)), expect: box.fn }; async function f() { mod.expect(1); var run = box.run; return (await run()); }`,
    ],
    // A getter's result is the property's value: with exp kept, d does not escape.
    [
      `${BOX} var exp = {}; Object.defineProperty(exp, "describe", { get: function () { return d; } }); function d() { __k6async_k6_sleep(1); } ${RUN}`,
      `${BOX} var exp = {}; Object.defineProperty(exp, "describe", { get: function () { return d; } }); async function d() { (await __k6async_k6_sleep(1)); } ${RUN}`,
    ],
    // exp escapes: so does what its getter gives.
    [
      `${BOX} var exp = {}; Object.defineProperty(exp, "describe", { get: function () { return d; } }); new Map().set(2, exp); function d() { __k6async_k6_sleep(1); } ${RUN}`,
      `${BOX} var exp = {}; Object.defineProperty(exp, "describe", { get: function () { return d; } }); new Map().set(2, exp); async function d() { (await __k6async_k6_sleep(1)); } ${RUN_AWAITED}`,
    ],
    // The getter itself escapes too: unseen code may call it, and gets d.
    [
      `${BOX} var exp = {}; var g = function () { return d; }; Object.defineProperty(exp, "describe", { get: g }); new Map().set(2, g); function d() { __k6async_k6_sleep(1); } ${RUN}`,
      `${BOX} var exp = {}; var g = function () { return d; }; Object.defineProperty(exp, "describe", { get: g }); new Map().set(2, g); async function d() { (await __k6async_k6_sleep(1)); } ${RUN_AWAITED}`,
    ],
  ])("%s", (input, expected) => {
    expect(rewrite(input)).toBe(expected);
  });
});
