/**
 * Calls of code the async rewrite's analysis does not see — builtins, k6's functions that do
 * not block, methods of host objects (a response, a Map) — known by the name called. What
 * matters is what they do with the script's functions and objects: run a callback now
 * (`filter`, `check`), run it and wait for it (`then`), keep it where something may hand it
 * back (`push`, `set`, anything not listed), or only look at it (`keys`, `log`). A function
 * kept escapes (async-transform-heap.ts); one run is held to its caller's rules by the
 * colouring (async-transform-colour.ts).
 *
 * `Object.defineProperty`, `create`, `assign` and `freeze` are followed as what they do to
 * objects: a bundle's module objects are made with them (esbuild's `__export` and
 * `__copyProps`, minified the same in a jslib bundle), and a module's functions must stay
 * reachable by name through them rather than escape.
 */
import type { Args } from "./async-transform-args.ts";
import { computedKey } from "./async-transform-keys.ts";
import { copyFields } from "./async-transform-literals.ts";
import type { CallFacts, Evaluator as Flow, HostKind } from "./async-transform-types.ts";
import {
  ANY_KEY,
  addAll,
  EMPTY,
  ELEMENTS,
  type FnToken,
  fieldName,
  fieldOf,
  hostToken,
  isHeap,
  OBJECT_PROTOTYPE,
  type Token,
  UNKNOWN,
  type Values,
} from "./async-transform-values.ts";
import { type AnyNode, keyName } from "./async-transform-walk.ts";

/** Builtins that run a function given to them, and how. */
const CALLBACK_METHODS = new Map<string, HostKind>([
  ["forEach", "sequence"],
  ["map", "sequence"],
  // k6/html's Selection.each(fn(index, element)).
  ["each", "sequence"],
  ["then", "awaits"],
  // k6/websockets' WebSocket: a listener that sleeps blocks k6's event loop; edgeload's socket
  // waits for the promise of an async one before its next event (runtime/websockets.ts).
  ["addEventListener", "awaits"],
  ["catch", "awaits"],
  ["finally", "awaits"],
  ...[
    "filter",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "some",
    "every",
    "reduce",
    "reduceRight",
    "sort",
    "toSorted",
    "flatMap",
    "replace",
    "replaceAll",
    "from",
  ].map((m) => [m, "sync"] as [string, HostKind]),
]);

/** Builtins that only look at what they are given (and return no function of the script's). */
const READ_ONLY = new Set(
  (
    "hasOwnProperty hasOwn keys getOwnPropertyNames getOwnPropertySymbols isArray is includes indexOf lastIndexOf join toString toFixed " +
    "toLowerCase toUpperCase trim trimStart trimEnd startsWith endsWith split substring substr charAt charCodeAt codePointAt padStart padEnd " +
    "repeat match matchAll search test exec parse stringify log info warn error debug trace max min floor ceil round abs random now " +
    "valueOf isPrototypeOf propertyIsEnumerable toLocaleString isNaN isFinite parseInt parseFloat encodeURIComponent decodeURIComponent encodeURI decodeURI Number String Boolean json html"
  ).split(" "),
);

/** Builtins that keep what they are given in the receiver: an array literal's elements stay followed. */
const STORES_IN_RECEIVER = new Set(["push", "unshift", "fill", "splice"]);
/** Builtins that keep what they are given and call none of it: a Map's `set`, a Set's `add`. */
const KEEPS = new Set([...STORES_IN_RECEIVER, "set", "add"]);

/** A function handed to code that runs it: that code gives it anything, and keeps what it returns. */
export function register(flow: Flow, facts: CallFacts | null, fn: FnToken, host: HostKind, resultTo: "host" | "field" = "host"): void {
  flow.heap.markHostCalled(fn, resultTo);
  facts?.callbacks.push({ fn, host });
}

export const functionsIn = (values: Iterable<Token>): FnToken[] => [...values].filter((t): t is FnToken => t.kind === "fn" && !t.isClass);

/** The functions among `values` and in the fields of its objects: `check(r, { ok: (r) => … })`. */
export function functionsInOrFields(values: Iterable<Token>): FnToken[] {
  const out = new Set(functionsIn(values));
  for (const t of values) if (t.kind === "obj") for (const v of t.fields.values()) for (const fn of functionsIn(v)) out.add(fn);
  return [...out];
}

type Callbacks = (fns: Iterable<FnToken>, host: HostKind, resultTo?: "host" | "field") => void;

export interface HostCall {
  readonly name: string;
  /** One of k6's functions that does not block (`check`, `new SharedArray(…)`). */
  readonly k6: boolean;
  readonly receiver: Values | null;
  readonly args: Args;
  /** The call's node, for the builtins followed by what their arguments are written as; null through `.call`. */
  readonly node: AnyNode | null;
  /** Whether the callbacks it runs are recorded as run by it (not when the callee may be the script's own). */
  readonly recordCallbacks: boolean;
}

export function hostCall(flow: Flow, facts: CallFacts, call: HostCall): Values {
  const callbacks: Callbacks = (fns, host, resultTo) => {
    for (const fn of fns) register(flow, call.recordCallbacks ? facts : null, fn, host, resultTo);
  };
  const heap = flow.heap;
  const { name, args, receiver } = call;
  if (call.k6) {
    // check's functions, SharedArray's loader: run at once; k6 keeps nothing.
    callbacks(functionsInOrFields(args.all()), "sync");
    return new Set([UNKNOWN]);
  }
  const special = objectBuiltin(flow, call, callbacks);
  if (special) return special;
  const kind = CALLBACK_METHODS.get(name);
  if (kind) {
    // The receiver's elements are handed to the callback, which may keep or call them.
    if (receiver) heap.escape(receiver);
    const all = args.all();
    callbacks(functionsIn(all), kind);
    heap.escape([...all].filter((t) => t.kind !== "fn"));
    if (kind === "sequence" && receiver && call.node && call.recordCallbacks) facts.sequenceMethod = name as "forEach" | "map" | "each";
    return new Set([UNKNOWN]);
  }
  if (READ_ONLY.has(name)) return new Set([UNKNOWN]);
  if (STORES_IN_RECEIVER.has(name) && receiver && [...receiver].every(isHeap)) {
    const stored = name === "splice" ? args.from(2) : args.all();
    for (const r of receiver) if (isHeap(r)) heap.add(fieldOf(r.fields, ELEMENTS), stored);
    return new Set([UNKNOWN]);
  }
  if (KEEPS.has(name)) {
    heap.escape(args.all());
    return new Set([UNKNOWN]);
  }
  // Anything else may run what it is given now and keep it for later: both. An object
  // written in the call is taken as handlers it may run (`new Proxy(t, { get() {…} })`).
  if (receiver) heap.escape(receiver);
  const all = args.all();
  const written = call.node?.arguments?.filter((a: AnyNode) => a.type === "ObjectExpression").map((a: AnyNode) => heap.objectAt(a, "object")) ?? [];
  callbacks([...functionsIn(all), ...functionsInOrFields(written).filter((f) => f.kind === "fn")], "sync");
  heap.escape(all);
  return new Set([UNKNOWN]);
}

/** `Object.defineProperty`, `create`, `assign`, `freeze`…: followed as what they make; null for other names. */
function objectBuiltin(flow: Flow, call: HostCall, callbacks: Callbacks): Values | null {
  const heap = flow.heap;
  const { args } = call;
  switch (call.name) {
    case "Object":
      // `Object(f)` is f itself for an object or a function (webpack writes `Object(l.group)(…)`
      // to call an import without `this`); for a primitive, a wrapper with nothing to call.
      return call.receiver === null ? new Set([...args.at(0)].filter((t) => t.kind !== "primitive")) : null;
    case "defineProperty":
      return call.node ? defineProperty(flow, call, callbacks) : null;
    case "create": {
      if (!call.node) return null;
      const made = heap.objectAt(call.node, "object");
      heap.add(made.proto, args.at(0));
      heap.escape(args.from(1));
      return new Set([made]);
    }
    case "assign": {
      const target = args.at(0);
      for (const source of [args.from(1)]) {
        for (const t of target) if (isHeap(t)) copyFields(heap, source, t.fields);
        if (![...target].every(isHeap)) heap.escape(source);
      }
      return target;
    }
    case "getOwnPropertyDescriptor": {
      // What it describes, without escaping: `__copyProps` reads only `.enumerable`.
      if (!call.node) return null;
      const descriptor = heap.objectAt(call.node, "object");
      const key = call.node.arguments[1]?.type === "Literal" ? keyName(call.node.arguments[1], true) : null;
      // Not widened: for a key known only at run time this holds every field, and what reads
      // `.value` is rare (a set it flows into is widened then).
      if (addAll(fieldOf(descriptor.fields, "value"), heap.read(args.at(0), key))) heap.changed = true;
      return new Set([descriptor]);
    }
    case "freeze":
    case "seal":
    case "preventExtensions":
      return args.at(0);
    case "setPrototypeOf":
      for (const t of args.at(0)) if (isHeap(t)) heap.add(t.proto, args.at(1));
      return args.at(0);
    case "getPrototypeOf": {
      // An object the script made without a prototype of its own has Object.prototype.
      const out: Values = new Set();
      for (const t of args.at(0)) for (const p of isHeap(t) ? (t.proto.size ? t.proto : [hostToken(OBJECT_PROTOTYPE)]) : [UNKNOWN as Token]) out.add(p);
      return out;
    }
    default:
      return null;
  }
}

/**
 * `Object.defineProperty(target, key, descriptor)`: target's `key` holds the descriptor's
 * value, or what its getter returns. Two shapes copy a whole object, the key running over
 * another object's keys: `{ get: () => from[key] }` (esbuild's `__copyProps`) copies `from`'s
 * fields by name, `{ get: all[key] }` (its `__export`) holds what each of `all`'s getters returns.
 */
function defineProperty(flow: Flow, call: HostCall, callbacks: Callbacks): Values {
  const heap = flow.heap;
  const target = call.args.at(0);
  const [, keyNode, descriptorNode] = (call.node as AnyNode).arguments as AnyNode[];
  const copy = correlatedCopy(flow, keyNode, descriptorNode);
  if (copy) {
    for (const t of target) {
      if (!isHeap(t)) continue;
      if (copy.how === "fields") copyFields(heap, copy.from, t.fields);
      else for (const o of copy.from) copyReturns(flow, o, t.fields);
    }
    return target;
  }
  // A literal, or a parameter of a copy whose call gave one (webpack's `r.d(exports, "describe", getter)`).
  const key = fieldName(keyNode ? computedKey(flow.heap, keyNode) : null);
  for (const d of call.args.at(2)) {
    if (d.kind !== "obj") {
      heap.store(target, key === ANY_KEY ? null : key, [UNKNOWN]);
      continue;
    }
    const getters = functionsIn(d.fields.get("get") ?? EMPTY);
    // The platform runs a getter or setter when the property is used: at once, as `sync` callbacks.
    callbacks([...getters, ...functionsIn(d.fields.get("set") ?? EMPTY)], "sync", "field");
    heap.store(target, key === ANY_KEY ? null : key, [...(d.fields.get("value") ?? EMPTY), ...getters.flatMap((g) => [...g.returns])]);
  }
  return target;
}

/** Getters a descriptor of `all[key]` shape copies: each of all's fields, by name, as what its getter returns. */
function copyReturns(flow: Flow, from: Token, into: Map<string, Values>): void {
  if (!isHeap(from)) {
    flow.heap.add(fieldOf(into, ANY_KEY), flow.heap.read([from], null));
    return;
  }
  for (const [key, values] of from.fields) {
    const returned: Values = new Set();
    for (const v of values) for (const r of v.kind === "fn" ? v.returns : [UNKNOWN as Token]) returned.add(r);
    flow.heap.add(fieldOf(into, key), returned);
  }
}

/**
 * The getters of `defineProperty(target, key, { get: () => from[key] })` calls: the copy is
 * followed at the call (by name), so the getter itself is not followed as a function — what
 * it returns, every field of every object it copies from, would only be a set to widen.
 */
export function copyGetters(calls: Iterable<AnyNode>, refs: ReadonlyMap<AnyNode, unknown>): Set<AnyNode> {
  const getters = new Set<AnyNode>();
  for (const call of calls) {
    const [, key, descriptor] = call.arguments ?? [];
    if (key?.type !== "Identifier" || descriptor?.type !== "ObjectExpression") continue;
    const getter = descriptor.properties.find((p: AnyNode) => p.type === "Property" && keyName(p.key, p.computed) === "get")?.value;
    const body = getter?.type === "ArrowFunctionExpression" && getter.expression ? getter.body : null;
    if (body?.type === "MemberExpression" && body.computed && body.property.type === "Identifier" && refs.get(body.property) === refs.get(key) && refs.get(key))
      getters.add(getter);
  }
  return getters;
}

/** The two whole-object descriptor shapes (see defineProperty), or null. */
function correlatedCopy(flow: Flow, keyNode: AnyNode | undefined, descriptor: AnyNode | undefined): { how: "fields" | "getters"; from: Values } | null {
  if (keyNode?.type !== "Identifier" || descriptor?.type !== "ObjectExpression") return null;
  const key = flow.names.refs.get(keyNode);
  const getter = descriptor.properties.find((p: AnyNode) => p.type === "Property" && keyName(p.key, p.computed) === "get")?.value;
  const readsKey = (n: AnyNode | undefined) =>
    n?.type === "MemberExpression" && n.computed && n.property.type === "Identifier" && key !== undefined && flow.names.refs.get(n.property) === key;
  if (getter?.type === "ArrowFunctionExpression" && getter.expression && readsKey(getter.body)) return { how: "fields", from: flow.value(getter.body.object) };
  if (readsKey(getter)) return { how: "getters", from: flow.value(getter.object) };
  return null;
}
