/**
 * Conditionals whose test the async rewrite's flow analysis knows before the script runs:
 * `typeof WeakMap == "function"`, for a builtin every runtime edgeload runs scripts on
 * (workerd's V8) has. Libraries test for such builtins and fall back to a polyfill
 * otherwise; chai's deep-eql falls back to a map that stores under a key known only at run
 * time (`Object.defineProperty(obj, this._key, …)`), so every object deep-eql compared
 * seemed to hold every value it memoised — ajv's too, whose rules then seemed to block.
 * Only the branch that runs is evaluated.
 */
import type { Names } from "./async-transform-scope.ts";
import type { AnyNode } from "./async-transform-walk.ts";

/** Builtin constructors every supported runtime has: `typeof` of each is "function". */
const BUILTIN_FUNCTIONS = new Set(["Map", "Set", "WeakMap", "WeakSet", "Symbol", "Promise", "Proxy", "ArrayBuffer", "DataView"]);

const EQUALS = new Set(["==", "==="]);
const NOT_EQUALS = new Set(["!=", "!=="]);

/** The branches of `test ? a : b` that may run: the one its known test picks, else both. */
export function liveBranches(names: Names, node: AnyNode): AnyNode[] {
  const known = knownTest(names, node.test);
  return known === null ? [node.consequent, node.alternate] : [known ? node.consequent : node.alternate];
}

/**
 * `typeof X == "function"` (either side, `===`, or negated with `!=`, `!==`) of a global
 * builtin constructor no script binding shadows; null for any other test.
 */
function knownTest(names: Names, test: AnyNode): boolean | null {
  if (test.type !== "BinaryExpression" || !(EQUALS.has(test.operator) || NOT_EQUALS.has(test.operator))) return null;
  const [typeOf, literal] = test.left.type === "UnaryExpression" ? [test.left, test.right] : [test.right, test.left];
  if (typeOf.type !== "UnaryExpression" || typeOf.operator !== "typeof" || literal.type !== "Literal" || literal.value !== "function") return null;
  const name = typeOf.argument;
  if (name.type !== "Identifier" || !BUILTIN_FUNCTIONS.has(name.name) || names.refs.get(name)) return null;
  return EQUALS.has(test.operator);
}
