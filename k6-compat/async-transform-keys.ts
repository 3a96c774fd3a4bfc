/**
 * Property keys the async rewrite's flow analysis (async-transform-flow.ts) knows before the
 * script runs, for a computed member `o[k]`: a literal (`o["a"]`, `xs[1]`), or a parameter of
 * a small function's copy (Flow.callCopy) that the copy's call gives as a literal and that
 * nothing assigns. A webpack bundle's `require(10)` reads `modules[id]` in such a copy:
 * with the key known, it runs module 10 only, and its cache `cache[id]` holds module 10's
 * exports only; with it unknown, every module ran at every require, and every module's
 * exports came back from each.
 */
import type { Args } from "./async-transform-args.ts";
import type { Heap } from "./async-transform-heap.ts";
import { copyFields } from "./async-transform-literals.ts";
import type { Evaluator as Flow } from "./async-transform-types.ts";
import { ANY_KEY, type Clone, fieldOf, isHeap, PRIMITIVE, SYMBOL_KEY, type Token, UNKNOWN, type Values } from "./async-transform-values.ts";
import { type AnyNode, forEachChild, keyName } from "./async-transform-walk.ts";

const isWellKnownSymbol = (heap: Heap, node: AnyNode) =>
  node.type === "MemberExpression" &&
  !node.computed &&
  node.object.type === "Identifier" &&
  node.object.name === "Symbol" &&
  !heap.names.refs.get(node.object) &&
  typeof Reflect.get(Symbol, node.property.name) === "symbol";

/** The key an argument is written as: `10`, `"a"`, `r.s = 41` (an assignment gives its right side); else null. */
export function argumentKey(node: AnyNode): string | null {
  if (node.type === "Literal") return keyName(node, true);
  if (node.type === "TemplateLiteral" && node.expressions.length === 0) return node.quasis[0].value.cooked;
  if (node.type === "AssignmentExpression" && node.operator === "=") return argumentKey(node.right);
  return null;
}

/**
 * Records the keys a call of `clone` gives its root's parameters. A parameter qualifies when
 * it is a plain name, nothing assigns it, and the function does not read `arguments` (which,
 * in sloppy code, is another way to assign it). A copy is one call site's, so its calls
 * agree; were two not to, the parameter's key is dropped and the analysis goes round again.
 */
export function recordKeys(heap: Heap, clone: Clone, args: Args): void {
  const { names } = heap;
  const keys = new Map<AnyNode, string | null>();
  const root = clone.root;
  if (!names.argumentsOf.has(root) || readsArgumentsOnly(heap, root))
    root.params.forEach((param: AnyNode, i: number) => {
      const binding = param.type === "Identifier" ? names.refs.get(param) : null;
      if (binding && !names.written.has(binding)) keys.set(param, args.keyAt(i));
    });
  if (!clone.keys) {
    clone.keys = new Map([...keys].map(([param, key]) => [names.refs.get(param)!, key]));
    return;
  }
  for (const [param, key] of keys) {
    const binding = names.refs.get(param)!;
    const known = clone.keys.get(binding);
    if (known === undefined || known === null || known === key) continue;
    clone.keys.set(binding, null);
    heap.changed = true;
  }
}

/** Per function: whether its code only reads its `arguments` (see readsArgumentsOnly). */
const argumentsOnlyRead = new WeakMap<AnyNode, boolean>();

/**
 * Whether every use of a function's `arguments` is a read of one of its members
 * (`arguments.length`, `arguments[2]`): then nothing reassigns a parameter through it. chai's
 * `flag(obj, key, value)` counts its arguments to tell a read from a write; its key is still
 * the literal each call gives. Any other use — `arguments[0] = x`, or the object handed on
 * (`f.apply(this, arguments)`), where the callee may write it — and the keys are not known.
 */
function readsArgumentsOnly(heap: Heap, root: AnyNode): boolean {
  const known = argumentsOnlyRead.get(root);
  if (known !== undefined) return known;
  const args = heap.names.argumentsOf.get(root);
  let onlyRead = true;
  const visit = (node: AnyNode, parent: AnyNode | null, grandparent: AnyNode | null) => {
    if (!onlyRead) return;
    if (node.type === "Identifier" && heap.names.refs.get(node) === args) {
      onlyRead = parent?.type === "MemberExpression" && parent.object === node && grandparent !== null && !isWrittenThere(parent, grandparent);
      return;
    }
    forEachChild(node, (child) => visit(child, node, parent));
  };
  visit(root.body, root, null);
  argumentsOnlyRead.set(root, onlyRead);
  return onlyRead;
}

/** Whether `member` is a target where it sits in `parent` (assigned, updated, a pattern's or a loop's target). */
function isWrittenThere(member: AnyNode, parent: AnyNode): boolean {
  const type = parent.type;
  if (type === "AssignmentExpression" || type === "AssignmentPattern" || type === "ForInStatement" || type === "ForOfStatement") return parent.left === member;
  // A property's value may be a destructuring target (`({ a: arguments[0] } = o)`): taken as one.
  if (type === "UpdateExpression" || type === "ArrayPattern" || type === "RestElement" || (type === "Property" && parent.value === member)) return true;
  // `arguments[0]()` runs a function with `arguments` as its `this`, which it may write.
  return (type === "CallExpression" && parent.callee === member) || (type === "TaggedTemplateExpression" && parent.tag === member);
}

/**
 * The key of a computed member's property (evaluated already), or null when it is known
 * only at run time. A parameter's key holds while its values are primitives only: a value
 * of another kind would mean the copy was called some other way.
 */
export function computedKey(heap: Heap, property: AnyNode): string | null {
  if (property.type === "Literal") return keyName(property, true);
  if (property.type === "TemplateLiteral" && property.expressions.length === 0) return property.quasis[0].value.cooked;
  // `o[Symbol.iterator]`: a name of its own, which no string key reaches; what a literal or a
  // class defines under a computed key is under "*", which every read reaches.
  if (isWellKnownSymbol(heap, property)) return `${SYMBOL_KEY}${property.property.name}`;
  const clone = heap.clone;
  const binding = property.type === "Identifier" ? heap.names.refs.get(property) : null;
  // A parameter no call gives a value: undefined (or the function is never called). webpack's
  // require itself, run as no copy, would otherwise run every module under a key not known.
  if (binding && heap.names.parameters.has(binding) && heap.bindingValues(binding).size === 0) return "undefined";
  if (!binding || !clone?.keys || binding.declaredIn !== clone.root) return null;
  const key = clone.keys.get(binding) ?? null;
  if (key === null) return null;
  for (const t of heap.bindingValues(binding)) if (t.kind !== "primitive") return null;
  return key;
}

/**
 * The keys a computed member's property (evaluated already) may be: its one key, or each of
 * a conditional's branches' (ajv's `it.util[several ? "checkDataTypes" : "checkDataType"]`
 * reads those two fields, not every field of `util`); null when one is known only at run time.
 */
export function computedKeys(heap: Heap, property: AnyNode): string[] | null {
  if (property.type !== "ConditionalExpression") {
    const key = computedKey(heap, property);
    return key === null ? null : [key];
  }
  const whenTrue = computedKeys(heap, property.consequent);
  const whenFalse = whenTrue && computedKeys(heap, property.alternate);
  return whenTrue && whenFalse ? [...new Set([...whenTrue, ...whenFalse])] : null;
}

/** What reading any of `keys` (a member's property names; null: any name) of `objects` gives. */
export function readKeys(heap: Heap, objects: Values, keys: readonly (string | null)[]): Values {
  if (keys.length === 1) return heap.read(objects, keys[0]!);
  const out: Values = new Set();
  for (const key of keys) for (const v of heap.read(objects, key)) out.add(v);
  return out;
}

/**
 * `for (k in src) dst[k] = src[k]`, the copy a webpack library's UMD wrapper makes of its
 * exports (`for (var n in t) e[n] = t[n]`): dst gets src's fields by name, those of its
 * prototypes too (for-in enumerates them); from an escaped src or one the analysis does not
 * see, anything under any name. False, and nothing done, for a loop of another shape.
 */
export function forInCopy(flow: Flow, loop: AnyNode): boolean {
  const names = flow.names;
  const key = loop.left.type === "VariableDeclaration" ? loop.left.declarations[0].id : loop.left;
  const body = loop.body.type === "BlockStatement" && loop.body.body.length === 1 ? loop.body.body[0] : loop.body;
  const copy = body.type === "ExpressionStatement" ? body.expression : null;
  const byKey = (n: AnyNode) =>
    n.type === "MemberExpression" &&
    n.computed &&
    n.property.type === "Identifier" &&
    key.type === "Identifier" &&
    names.refs.get(n.property) === names.refs.get(key);
  const sameName = (a: AnyNode, b: AnyNode) => a.type === "Identifier" && b.type === "Identifier" && names.refs.get(a) === names.refs.get(b);
  if (copy?.type !== "AssignmentExpression" || copy.operator !== "=" || !byKey(copy.left) || !byKey(copy.right)) return false;
  // ajv's util.copy writes `for (var k in to = to || {}, from)`: the source is the sequence's last.
  const source = loop.right.type === "SequenceExpression" ? loop.right.expressions.at(-1) : loop.right;
  if (copy.left.object.type !== "Identifier" || !sameName(copy.right.object, source) || !names.refs.get(key)) return false;
  const heap = flow.heap;
  const sources = [...flow.value(loop.right)];
  heap.writeName(key, [PRIMITIVE]);
  for (const target of flow.value(copy.left.object)) {
    if (!isHeap(target)) {
      heap.store([target], null, heap.read(sources, null));
      continue;
    }
    const seen = new Set<Token>();
    const copyFrom = (source: Token, depth: number) => {
      if (seen.has(source) || depth > 8) return;
      seen.add(source);
      if (isHeap(source) && heap.escaped.has(source)) heap.add(fieldOf(target.fields, ANY_KEY), [UNKNOWN]);
      copyFields(heap, new Set([source]), target.fields);
      if (isHeap(source)) for (const p of source.proto) copyFrom(p, depth + 1);
    };
    for (const source of sources) copyFrom(source, 0);
  }
  return true;
}
