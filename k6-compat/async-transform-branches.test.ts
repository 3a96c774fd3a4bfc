/**
 * The async rewrite's known conditionals (async-transform-branches.ts): `typeof WeakMap ==
 * "function" ? WeakMap : Fake` evaluates WeakMap only, so a fallback that stores under a key
 * known only at run time (chai's deep-eql) does not spread what it stores to every object.
 */
import { describe, expect, it } from "vitest";
import { rewriteBody } from "../test/support/async-rewrite-body.ts";

const rewrite = rewriteBody;

/** A fallback map that stores under a key known only at run time, as deep-eql's does, and a use of whichever map M is. */
const FAKE = "function Fake() {} Fake.prototype.set = function (o, v) { o[this.k] = v; };";
const USE = "var o = { b: () => 1 }; new M().set(o, () => __k6async_k6_sleep(1)); function f() { return o.b(); }";
const USE_ASYNC = "var o = { b: () => 1 }; new M().set(o, async () => (await __k6async_k6_sleep(1))); function f() { return o.b(); }";
const USE_AWAITED = "var o = { b: () => 1 }; new M().set(o, async () => (await __k6async_k6_sleep(1))); async function f() { return (await o.b()); }";

describe("a conditional on typeof a builtin evaluates the branch that runs", () => {
  it.each([
    // WeakMap exists: Fake never stores, so o.b is only what the literal gives it.
    ['var M = typeof WeakMap == "function" ? WeakMap : Fake;', USE_ASYNC],
    // The same test written the other way round and negated.
    ['var M = "function" !== typeof WeakMap ? Fake : WeakMap;', USE_ASYNC],
    // A global the runtime may lack: both branches, so Fake's store may put the sleep in o.b.
    ['var M = typeof NoSuch == "function" ? NoSuch : Fake;', USE_AWAITED],
    // A script's own WeakMap is not the builtin: both branches.
    ['var WeakMap = 1; var M = typeof WeakMap == "function" ? WeakMap : Fake;', USE_AWAITED],
    // Another test: both branches.
    ['var M = typeof WeakMap == "object" ? NoSuch : Fake;', USE_AWAITED],
  ])("%s", (choice, expected) => {
    expect(rewrite(`${FAKE} ${choice} ${USE}`)).toBe(`${FAKE} ${choice} ${expected}`);
  });
});
