/**
 * Calls, for the async rewrite's flow analysis (async-transform-flow.ts): what a call may
 * run — the script's functions, k6's blocking functions, a builtin, or a value from code
 * the analysis does not see — recorded as the call's facts, with the arguments flowing
 * into the parameters of whatever it runs. Builtins are known by name
 * (async-transform-hosts.ts): which call their callbacks, which keep what they are given,
 * and the few whose effect on objects must be followed for a bundle's module objects to be
 * (`Object.defineProperty`, `Object.create`, `Object.assign`).
 */
import { Args } from "./async-transform-args.ts";
import { esbuildHelper, isModuleRunner, runModule } from "./async-transform-esbuild.ts";
import { functionsIn, hostCall, register } from "./async-transform-hosts.ts";
import { argumentKey, readKeys } from "./async-transform-keys.ts";
import type { CallFacts, Evaluator as Flow } from "./async-transform-types.ts";
import { EMPTY, type FnToken, UNKNOWN, type Values } from "./async-transform-values.ts";
import { type AnyNode, keyName, unwrapCallee } from "./async-transform-walk.ts";

/** How deep `new` follows a class's implicit `super(...)` chain. */
const MAX_CLASS_DEPTH = 16;

export function evaluateCall(flow: Flow, node: AnyNode): Values {
  const isNew = node.type === "NewExpression";
  const calleeNode = node.type === "TaggedTemplateExpression" ? node.tag : node.callee;
  const inner = unwrapCallee(calleeNode);
  // A call in a function evaluated per call (Flow.callCopy) is met once per copy: its facts add up.
  const facts: CallFacts = flow.facts.get(node) ?? {
    node,
    functions: new Set(),
    roots: new Set(),
    unknown: "none",
    unknownMembers: new Set(),
    isNew,
    callbacks: [],
    sequenceMethod: null,
    calleeText: calleeText(inner),
  };
  flow.facts.set(node, facts);
  if (inner.type === "Super") {
    const args = argumentsOf(flow, node);
    const cls = flow.classes.at(-1);
    for (const parent of cls?.superValues ?? []) {
      if (parent.kind === "fn") construct(flow, facts, parent, args, flow.thisValues, 0);
      else flow.heap.escape(args.all());
    }
    return EMPTY as Values;
  }
  // `(0, o.f)(…)`, esbuild's call of an import: o.f run with no `this`, so o goes nowhere.
  if (inner.type === "MemberExpression" && inner.object.type !== "Super") return memberCall(flow, facts, inner, node, calleeNode.type === "SequenceExpression");
  let callee: Values;
  let receiver: Values | null = null;
  let member: string | null = null;
  if (inner.type === "MemberExpression") {
    // super.m(…): the parent's method, on this object.
    receiver = flow.thisValues;
    member = flow.propertyName(inner);
    callee = flow.heap.read(flow.superObjects(), member);
  } else {
    callee = flow.value(inner);
  }
  const args = argumentsOf(flow, node);
  const helper = isNew ? null : esbuildHelper(flow, inner, node, args);
  if (helper) return helper;
  return runCallee(flow, facts, callee, receiver, args, member, node, { record: !mayBeScript(callee), copy: monomorphic(callee) });
}

/**
 * `o.m(…)`, one possible `o` at a time: what a builtin method may do to its receiver
 * concerns that receiver only, not the script's objects `o` may also be. `f.call(…)`,
 * `f.apply(…)` and `f.bind(…)` of a function are calls of f; of an object, its own method.
 */
function memberCall(flow: Flow, facts: CallFacts, callee: AnyNode, node: AnyNode, thisless: boolean): Values {
  const receivers = flow.value(callee.object);
  const members = flow.propertyNames(callee);
  const args = argumentsOf(flow, node);
  const all = readKeys(flow.heap, receivers, members);
  const how = { record: !mayBeScript(all), copy: monomorphic(all), thisless };
  const result: Values = new Set();
  for (const member of members)
    for (const r of receivers) {
      const one = new Set([r]);
      const values =
        !thisless && !facts.isNew && (member === "call" || member === "apply" || member === "bind") && r.kind !== "obj" && r.kind !== "ns"
          ? indirectCall(flow, facts, member, one, args, node, how)
          : runCallee(flow, facts, flow.heap.read(one, member), one, args, member, node, how);
      for (const v of values) result.add(v);
    }
  return result;
}

interface How {
  /** Whether callbacks a builtin runs are held to its rules (not when the callee may be the script's own). */
  readonly record: boolean;
  /** Whether a small function called is evaluated as its own copy (Flow.callCopy): when it is the only one the call may run. */
  readonly copy: boolean;
  /** Through `.call` or `.apply`. */
  readonly indirect?: boolean;
  /** A member called with no `this` (`(0, o.f)(…)`): the receiver is where the callee was read, not what it runs on. */
  readonly thisless?: boolean;
}

const monomorphic = (callee: Values) => [...callee].filter((t) => t.kind === "fn").length === 1;

/** A callee that may be the script's own function or k6's: what a builtin would do with the callbacks is not the whole story. */
const mayBeScript = (callee: Values) => [...callee].some((t) => t.kind === "fn" || t.kind === "root" || isModuleRunner(t));

/** `f.call(self, a)`, `f.apply(self, [a])`, `f.bind(self, a)`: a call of f, or f itself. */
function indirectCall(flow: Flow, facts: CallFacts, kind: "call" | "apply" | "bind", functions: Values, args: Args, node: AnyNode, how: How): Values {
  const self = args.at(0);
  const rest =
    kind === "apply" ? new Args([], flow.elements(args.at(1)), 0) : new Args(args.positional.slice(1), args.spread, args.spreadAt - 1, args.keys.slice(1));
  if (kind !== "bind") return runCallee(flow, facts, functions, self, rest, null, node, { ...how, indirect: true });
  const bound: Values = new Set();
  for (const t of functions) {
    if (t.kind === "fn" && !t.isClass) flow.callFunction(t, rest, self);
    if (t.kind !== "obj") bound.add(t);
  }
  return bound;
}

/** What running each possible callee does; the values the call may give. */
function runCallee(flow: Flow, facts: CallFacts, callee: Values, receiver: Values | null, args: Args, member: string | null, node: AnyNode, how: How): Values {
  const { record, indirect } = how;
  const self = how.thisless ? null : receiver;
  const result: Values = new Set();
  for (const t of callee) {
    if (t.kind === "fn") {
      if (facts.isNew) {
        construct(flow, facts, t, args, new Set([t.instance()]), 0);
        result.add(t.instance());
      } else if (!t.isClass) {
        facts.functions.add(t);
        const copied = how.copy ? flow.callCopy(t, args, self, node) : null;
        if (!copied) flow.callFunction(t, args, self);
        for (const v of t.info!.isGenerator ? [UNKNOWN] : (copied ?? t.returns)) result.add(v);
        // The bundle's exports (default, setup, scenario functions…): the runtime calls them, with anything.
        if (t.info!.kind === "init") for (const fn of functionsIn(flow.heap.read(t.returns, null))) flow.heap.markHostCalled(fn);
      }
    } else if (isModuleRunner(t)) {
      for (const v of runModule(flow, facts, t)) result.add(v);
    } else if (t.kind === "root") {
      facts.roots.add(t.name);
      // k6's group() awaits its callback; nothing else of k6's takes one it does not await.
      for (const fn of functionsIn(args.all())) register(flow, facts, fn, "awaits");
      result.add(UNKNOWN);
    } else if (t.kind === "host" || t.kind === "unknown") {
      if (t.kind === "unknown") markUnknown(facts, receiver !== null && !indirect, member);
      const name = t.kind === "host" ? (member ?? t.name) : (member ?? "");
      const k6 = t.kind === "host" && t.k6;
      for (const v of hostCall(flow, facts, { name, k6, receiver: self, args, node: indirect ? null : node, recordCallbacks: record })) result.add(v);
    }
  }
  return result;
}

/**
 * A call's callee may come from unseen code. Of a member, any escaped object's of that name:
 * the names add up over the call's copies (each may read another key) and a conditional key.
 */
function markUnknown(facts: CallFacts, isMember: boolean, member: string | null): void {
  if (!isMember) facts.unknown = "call";
  if (facts.unknown === "call") return;
  facts.unknown = "member";
  if (member === null) facts.unknownMembers = null;
  else facts.unknownMembers?.add(member);
}

/** `new C(…)`: C's constructor (or, without one, its parent's) runs with `self` as `this`. */
function construct(flow: Flow, facts: CallFacts, cls: FnToken, args: Args, self: Values, depth: number): void {
  const heap = flow.heap;
  if (!cls.isClass) {
    facts.functions.add(cls);
    flow.callFunction(cls, args, self);
    for (const instance of self) if (instance.kind === "obj") heap.add(instance.proto, cls.fields.get("prototype") ?? EMPTY);
    return;
  }
  if (cls.ctor) {
    const ctor = heap.fnToken(cls.ctor);
    facts.functions.add(ctor);
    flow.callFunction(ctor, args, self);
    return;
  }
  if (depth > MAX_CLASS_DEPTH) return;
  for (const parent of cls.superValues) {
    if (parent.kind === "fn") construct(flow, facts, parent, args, self, depth + 1);
    else heap.escape(args.all());
  }
}

function argumentsOf(flow: Flow, node: AnyNode): Args {
  if (node.type === "TaggedTemplateExpression") return new Args([new Set([UNKNOWN]), ...node.quasi.expressions.map((e: AnyNode) => flow.value(e))]);
  const positional: Values[] = [];
  const keys = (node.arguments as AnyNode[]).map(argumentKey);
  let spread: Values | null = null;
  let spreadAt = Number.POSITIVE_INFINITY;
  node.arguments.forEach((a: AnyNode, i: number) => {
    if (a.type !== "SpreadElement") return positional.push(flow.value(a));
    spread = new Set([...(spread ?? EMPTY), ...flow.elements(flow.value(a.argument))]);
    spreadAt = Math.min(spreadAt, i);
    positional.push(EMPTY as Values);
  });
  return new Args(positional, spread, spreadAt, keys);
}

/** `xs.filter`, `setTimeout`, `a.b.c`: the callee as a message shows it. */
function calleeText(callee: AnyNode): string {
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression") {
    const name = keyName(callee.property, callee.computed) ?? "[…]";
    const object = callee.object.type === "Identifier" ? `${callee.object.name}.` : callee.object.type === "ThisExpression" ? "this." : "";
    return `${object}${name}`;
  }
  return "a function";
}
