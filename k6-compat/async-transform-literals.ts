/**
 * What the async rewrite's flow analysis (async-transform-flow.ts) makes of the literals
 * that hold functions: an object literal (its methods and getters, spread and `__proto__`),
 * an array literal, a class (its prototype's methods, its statics, its instances' fields,
 * its parent). Each is one object of the analysis, made where it is written.
 */
import type { Heap } from "./async-transform-heap.ts";
import type { Evaluator as Flow } from "./async-transform-types.ts";
import { ANY_KEY, ELEMENTS, fieldName, fieldOf, isHeap, type Token, UNKNOWN, type Values } from "./async-transform-values.ts";
import { type AnyNode, FUNCTION_TYPES, forEachChild, keyName } from "./async-transform-walk.ts";

/**
 * `[a, b]`: each element in its index's field, so that `xs[1]` gives b alone (a webpack
 * bundle's table of modules is such an array, and `require(1)` must run module 1 only).
 * From a spread on, an element's index is not known: those go to ELEMENTS, which every
 * index reads.
 */
export function arrayLiteral(flow: Flow, node: AnyNode): Values {
  if (flow.dataLiterals.has(node)) return new Set([UNKNOWN]);
  const array = flow.heap.objectAt(node, "array");
  let indexKnown = true;
  node.elements.forEach((e: AnyNode | null, i: number) => {
    if (e?.type === "SpreadElement") indexKnown = false;
    if (!e) return;
    const values = e.type === "SpreadElement" ? flow.elements(flow.value(e.argument)) : flow.value(e);
    flow.heap.add(fieldOf(array.fields, indexKnown ? String(i) : ELEMENTS), values);
  });
  return new Set([array]);
}

export function objectLiteral(flow: Flow, node: AnyNode): Values {
  if (flow.dataLiterals.has(node)) return new Set([UNKNOWN]);
  const heap = flow.heap;
  const obj = heap.objectAt(node, "object");
  for (const p of node.properties) {
    if (p.type === "SpreadElement") {
      copyFields(heap, flow.value(p.argument), obj.fields);
      continue;
    }
    if (p.computed) flow.value(p.key);
    const name = fieldName(keyName(p.key, p.computed));
    if (name === "__proto__" && !p.computed && !p.shorthand && !p.method && p.kind === "init") {
      heap.add(obj.proto, flow.value(p.value));
      continue;
    }
    const v = flow.value(p.value);
    const fn = FUNCTION_TYPES.has(p.value.type) ? heap.fnToken(p.value) : null;
    if (fn && (p.method || p.kind !== "init")) heap.add(fn.thisValues, [obj]);
    // A getter's value is what it returns; a setter holds nothing to call.
    if (p.kind === "get") heap.add(fieldOf(obj.fields, name), fn!.returns);
    else if (p.kind === "init") heap.add(fieldOf(obj.fields, name), v);
  }
  return new Set([obj]);
}

export function classValue(flow: Flow, node: AnyNode): Values {
  const heap = flow.heap;
  const cls = heap.fnToken(node);
  if (node.type === "ClassDeclaration" && node.id) heap.writeName(node.id, [cls]);
  if (node.superClass) {
    const parents = flow.value(node.superClass);
    heap.add(cls.superValues, parents);
    for (const s of parents) {
      heap.add(cls.prototypeObject().proto, [s.kind === "fn" ? s.prototypeObject() : s]);
      heap.add(cls.proto, [s]);
    }
  }
  const saved = flow.thisValues;
  flow.classes.push(cls);
  for (const member of node.body.body) {
    if (member.computed) flow.value(member.key);
    const name = fieldName(member.key ? keyName(member.key, member.computed) : null);
    const home = member.static ? cls : member.type === "MethodDefinition" ? cls.prototypeObject() : cls.instance();
    if (member.type === "MethodDefinition") {
      const fn = heap.fnToken(member.value);
      heap.add(fn.thisValues, [member.static ? cls : cls.instance()]);
      flow.value(member.value);
      if (member.kind === "method") heap.add(fieldOf(home.fields, name), [fn]);
      else if (member.kind === "get") heap.add(fieldOf(home.fields, name), fn.returns);
    } else if (member.type === "PropertyDefinition") {
      flow.thisValues = new Set([home]);
      if (member.value) heap.add(fieldOf(home.fields, name), flow.value(member.value));
    } else if (member.type === "StaticBlock") {
      flow.thisValues = new Set([cls]);
      for (const s of member.body) flow.value(s);
    }
    flow.thisValues = saved;
  }
  flow.classes.pop();
  return new Set([cls]);
}

/**
 * Array and object literals of literals only, inside another (`[[9, "&Tab;"], [0, { v: "&lt;" }]]`):
 * data, with nothing of the script's to call. A table of thousands would otherwise be
 * thousands of objects in every set it flows through; as UNKNOWN it is one, and a function
 * the script stores into one later escapes (async-transform-heap.ts store).
 */
export function dataLiterals(program: AnyNode): Set<AnyNode> {
  const nested = new Set<AnyNode>();
  const isData = (n: AnyNode | null): boolean => {
    if (!n) return true;
    switch (n.type) {
      case "Literal":
        return true;
      case "TemplateLiteral":
        return n.expressions.length === 0;
      case "UnaryExpression":
        return isData(n.argument);
      case "ArrayExpression":
        return n.elements.every(isData);
      case "ObjectExpression":
        return n.properties.every((p: AnyNode) => p.type === "Property" && p.kind === "init" && !p.computed && !p.method && isData(p.value));
      default:
        return false;
    }
  };
  const visit = (n: AnyNode) => {
    const children = n.type === "ArrayExpression" ? n.elements : n.type === "ObjectExpression" ? n.properties.map((p: AnyNode) => p.value) : null;
    // An empty one is a container to fill (`{ exports: {} }`), not data.
    const filled = (c: AnyNode) => (c.type === "ArrayExpression" ? c.elements.length : c.type === "ObjectExpression" ? c.properties.length : 0) > 0;
    if (children) for (const c of children) if (c && filled(c) && isData(c)) nested.add(c);
    forEachChild(n, visit);
  };
  visit(program);
  return nested;
}

/** `{ ...source }`: source's own fields, by name; from a value the analysis does not see, anything. */
export function copyFields(heap: Heap, source: Values, into: Map<string, Values>): void {
  for (const t of source) {
    if (isHeap(t)) for (const [key, values] of t.fields) heap.add(fieldOf(into, key), values);
    else if (t.kind === "unknown" || t.kind === "ns") heap.add(fieldOf(into, ANY_KEY), heap.read([t as Token], null));
  }
}
