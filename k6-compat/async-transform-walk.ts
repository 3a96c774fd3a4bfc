/**
 * The syntax the async rewrite (async-transform.ts) reasons about, gathered in one walk of
 * the bundle: every function with the name calls reach it by and its parameters, every
 * call, and the names one thing is known by under another — esbuild's aliases of an import
 * (`var http_default = __k6asyncns_http`), its CommonJS views of a module
 * (`var k6 = (init_k6(), __toCommonJS(k6_exports))`), and the getters its export objects
 * are made of (`__export(k6_exports, { group: () => __k6async_k6_group })`, minified or
 * not), which is how a module that `require`s k6 or exports a function is reached.
 */
import type { Node } from "acorn";

export type AnyNode = Node & Record<string, any>;

export interface FunctionInfo {
  readonly node: AnyNode;
  /** The name calls reach it by, and whether through an object (a method) or directly. */
  readonly name: string | null;
  readonly method: boolean;
  /** Its parameters' names by position (null where a parameter is a pattern or a rest). */
  readonly params: readonly (string | null)[];
  /** The call it is an argument of, if any. */
  readonly argumentOf: AnyNode | null;
  readonly parent: FunctionInfo | null;
}

export interface CallInfo {
  readonly node: AnyNode;
  readonly within: FunctionInfo | null;
}

export interface BundleSyntax {
  readonly functions: FunctionInfo[];
  readonly calls: CallInfo[];
  /** `var a = b`, and `var a = (init(), __toCommonJS(b))`: a is b. */
  readonly aliases: Map<string, string>;
  /** Export objects: `__export(obj, { key: () => local })` → obj → key → local. */
  readonly exportObjects: Map<string, Map<string, string>>;
  /** Every getter property `key: () => local`, wherever it is: key → its locals. */
  readonly getters: Map<string, Set<string>>;
}

export const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

export function walkBundle(program: AnyNode): BundleSyntax {
  const syntax: BundleSyntax = { functions: [], calls: [], aliases: new Map(), exportObjects: new Map(), getters: new Map() };
  collect(program, null, null, syntax);
  return syntax;
}

/** `(0, obj.f)` — esbuild's way of calling an import without `this` — is `obj.f`. */
export function unwrapCallee(callee: AnyNode): AnyNode {
  if (callee.type === "SequenceExpression" && callee.expressions.length === 2 && callee.expressions[0].type === "Literal") return callee.expressions[1];
  return callee;
}

/** What `var a = <init>` makes `a` another name of, if anything. */
function aliasTarget(init: AnyNode | null): string | null {
  if (!init) return null;
  if (init.type === "Identifier") return init.name;
  if (init.type === "SequenceExpression") return aliasTarget(init.expressions[init.expressions.length - 1]);
  if (init.type === "CallExpression" && init.callee.type === "Identifier" && /^__to(CommonJS|ESM)$/.test(init.callee.name) && init.arguments.length >= 1) {
    return aliasTarget(init.arguments[0]);
  }
  return null;
}

/** `key: () => local`: the local name, or null. */
function getterTarget(property: AnyNode): string | null {
  if (property.type !== "Property" || property.kind !== "init" || property.computed) return null;
  const value = property.value;
  return value.type === "ArrowFunctionExpression" && value.body.type === "Identifier" ? value.body.name : null;
}

const keyName = (key: AnyNode) => (key.type === "Identifier" ? key.name : key.type === "Literal" ? String(key.value) : null);

function collect(node: AnyNode, within: FunctionInfo | null, parent: AnyNode | null, syntax: BundleSyntax): void {
  let inner = within;
  if (FUNCTION_TYPES.has(node.type)) {
    const named = nameOf(node, parent);
    const info: FunctionInfo = {
      node,
      name: named.name,
      method: named.method,
      params: node.params.map((p: AnyNode) =>
        p.type === "Identifier" ? p.name : p.type === "AssignmentPattern" && p.left.type === "Identifier" ? p.left.name : null,
      ),
      parent: within,
      argumentOf: parent?.type === "CallExpression" && parent.arguments.includes(node) ? parent : null,
    };
    if (named.methodKey) node.methodKey = named.methodKey;
    if (named.kind) node.kind = named.kind;
    syntax.functions.push(info);
    inner = info;
  }
  if (node.type === "CallExpression") {
    syntax.calls.push({ node, within });
    const [target, object] = node.arguments;
    if (target?.type === "Identifier" && object?.type === "ObjectExpression") {
      const exported = new Map<string, string>();
      for (const p of object.properties) {
        const local = getterTarget(p);
        const key = local === null ? null : keyName(p.key);
        if (key !== null && local !== null) exported.set(key, local);
      }
      if (exported.size) syntax.exportObjects.set(target.name, new Map([...(syntax.exportObjects.get(target.name) ?? []), ...exported]));
    }
  }
  if (node.type === "Property") {
    const local = getterTarget(node);
    const key = local === null ? null : keyName(node.key);
    if (key !== null && local !== null) syntax.getters.set(key, (syntax.getters.get(key) ?? new Set()).add(local));
  }
  if (node.type === "VariableDeclarator" && node.id.type === "Identifier") {
    const target = aliasTarget(node.init);
    if (target !== null) syntax.aliases.set(node.id.name, target);
  }
  for (const key of Object.keys(node)) {
    if (key === "loc" || key === "methodKey") continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const child of value) if (child && typeof child.type === "string") collect(child, inner, node, syntax);
    } else if (value && typeof value === "object" && typeof value.type === "string") {
      collect(value, inner, node, syntax);
    }
  }
}

function nameOf(fn: AnyNode, parent: AnyNode | null): { name: string | null; method: boolean; methodKey?: AnyNode; kind?: string } {
  if (fn.type === "FunctionDeclaration") return { name: fn.id?.name ?? null, method: false };
  if (!parent) return { name: null, method: false };
  if (parent.type === "VariableDeclarator" && parent.id.type === "Identifier") return { name: parent.id.name, method: false };
  if (parent.type === "Property" && parent.value === fn) {
    return {
      name: keyName(parent.key),
      method: true,
      ...(parent.method ? { methodKey: parent.key } : {}),
      ...(parent.kind !== "init" ? { kind: parent.kind } : {}),
    };
  }
  if (parent.type === "MethodDefinition" && parent.value === fn) {
    return { name: keyName(parent.key), method: true, methodKey: parent.key, ...(parent.kind !== "method" ? { kind: parent.kind } : {}) };
  }
  if (parent.type === "PropertyDefinition" && parent.value === fn) return { name: keyName(parent.key), method: true };
  if (parent.type === "AssignmentExpression" && parent.right === fn) {
    const left = parent.left;
    if (left.type === "Identifier") return { name: left.name, method: false };
    if (left.type === "MemberExpression" && !left.computed) return { name: left.property.name, method: true };
  }
  return { name: null, method: false };
}
