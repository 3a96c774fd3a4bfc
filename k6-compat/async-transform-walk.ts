/**
 * The syntax the async rewrite (async-transform.ts) works on, gathered in one walk of the
 * bundle: every function with what it is (a method, a getter, a constructor…: what may
 * become `async` and where the word goes) and every call with the function it is made in.
 * The flow analysis (async-transform-flow.ts) and the colouring (async-transform-colour.ts)
 * reason over these; the rewrite edits the text at their offsets.
 */
import type { Node } from "acorn";

export type AnyNode = Node & Record<string, any>;

/**
 * What a function is, as far as `async` goes: a getter, a setter, a constructor and a class's
 * field initialisers cannot be async (the language has no such thing); `init` is the
 * outermost function, the script's init context, which runs before any VU code.
 */
export type FunctionKind = "function" | "arrow" | "method" | "get" | "set" | "constructor" | "fields" | "init";

export interface FunctionInfo {
  /** The function node; for `fields`, the class body. */
  readonly node: AnyNode;
  readonly kind: FunctionKind;
  /** The function it is written in. */
  readonly parent: FunctionInfo | null;
  /** Written `async` by the script's author. */
  readonly isAsync: boolean;
  readonly isGenerator: boolean;
  /** A method's key: `async` goes before it (`async m() {}`, `static async m() {}`). */
  readonly methodKey: AnyNode | null;
  /** How a message names it: `login`, `Api.get`, or null. */
  readonly name: string | null;
}

export interface CallInfo {
  /** A CallExpression, NewExpression or TaggedTemplateExpression. */
  readonly node: AnyNode;
  /** The function the call is made in; null at the program's top level. */
  readonly within: FunctionInfo | null;
  /** Awaited as written (`await http.get(u)`): a second await would only cost. */
  readonly awaitedAsWritten: boolean;
}

export interface BundleSyntax {
  readonly functions: FunctionInfo[];
  readonly calls: CallInfo[];
  /** Function nodes (and class bodies, for their initialisers) to their info. */
  readonly functionOf: Map<AnyNode, FunctionInfo>;
}

export const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);
const CALL_TYPES = new Set(["CallExpression", "NewExpression", "TaggedTemplateExpression"]);
const NOT_CHILDREN = new Set(["loc", "start", "end", "type", "range"]);

/** Calls `visit` on each child node of `node`, in source order. */
export function forEachChild(node: AnyNode, visit: (child: AnyNode) => void): void {
  for (const key in node) {
    if (NOT_CHILDREN.has(key)) continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const child of value) if (child && typeof child.type === "string") visit(child);
    } else if (value && typeof value === "object" && typeof value.type === "string") {
      visit(value);
    }
  }
}

/** `(0, obj.f)` — esbuild's way of calling an import without `this` — is `obj.f`. */
export function unwrapCallee(callee: AnyNode): AnyNode {
  if (callee.type === "SequenceExpression" && callee.expressions.length === 2 && callee.expressions[0].type === "Literal") return callee.expressions[1];
  if (callee.type === "ChainExpression") return unwrapCallee(callee.expression);
  return callee;
}

/** The static name of a property key: `a`, `"a"`, `1`, `#a`; null when computed from a value. */
export function keyName(key: AnyNode, computed: boolean): string | null {
  if (key.type === "Identifier" && !computed) return key.name;
  if (key.type === "PrivateIdentifier") return `#${key.name}`;
  if (key.type === "Literal" && (typeof key.value === "string" || typeof key.value === "number")) return String(key.value);
  return null;
}

export function walkBundle(program: AnyNode): BundleSyntax {
  const syntax: BundleSyntax = { functions: [], calls: [], functionOf: new Map() };
  collect(program, null, null, syntax);
  return syntax;
}

function collect(node: AnyNode, within: FunctionInfo | null, parent: AnyNode | null, syntax: BundleSyntax, awaited = false): void {
  let inner = within;
  if (FUNCTION_TYPES.has(node.type)) {
    inner = describeFunction(node, parent, within);
    syntax.functions.push(inner);
    syntax.functionOf.set(node, inner);
  } else if (node.type === "ClassBody") {
    // Field initialisers and static blocks run as the class is made or an instance is.
    const fields: FunctionInfo = { node, kind: "fields", parent: within, isAsync: false, isGenerator: false, methodKey: null, name: null };
    syntax.functions.push(fields);
    syntax.functionOf.set(node, fields);
    for (const member of node.body) {
      const runsInFields = member.type === "StaticBlock" || member.type === "PropertyDefinition";
      if (member.type === "PropertyDefinition" && member.computed) collect(member.key, within, member, syntax);
      if (member.type === "MethodDefinition" && member.computed) collect(member.key, within, member, syntax);
      if (runsInFields) {
        if (member.type === "StaticBlock") for (const s of member.body) collect(s, fields, member, syntax);
        else if (member.value) collect(member.value, fields, member, syntax);
      } else {
        collect(member.value, within, member, syntax);
      }
    }
    return;
  }
  if (CALL_TYPES.has(node.type)) syntax.calls.push({ node, within, awaitedAsWritten: awaited });
  // `await f()`, and `await a?.b()`, whose call is the chain's.
  const awaitsChild = node.type === "AwaitExpression" || (node.type === "ChainExpression" && awaited);
  forEachChild(node, (child) => collect(child, inner, node, syntax, awaitsChild));
}

function describeFunction(fn: AnyNode, parent: AnyNode | null, within: FunctionInfo | null): FunctionInfo {
  const base = { node: fn, parent: within, isAsync: Boolean(fn.async), isGenerator: Boolean(fn.generator) };
  // The bundle is `var __k6script = (() => {…})();`: that function's body is the init context.
  if (within === null && fn.type !== "FunctionDeclaration" && parent?.type === "CallExpression" && parent.callee === fn) {
    return { ...base, kind: "init", methodKey: null, name: null };
  }
  if (parent?.type === "MethodDefinition" && parent.value === fn) {
    const kind = parent.kind === "constructor" ? "constructor" : parent.kind === "get" || parent.kind === "set" ? parent.kind : "method";
    return { ...base, kind, methodKey: parent.key, name: keyName(parent.key, parent.computed) };
  }
  if (parent?.type === "Property" && parent.value === fn) {
    const kind =
      parent.kind === "get" || parent.kind === "set" ? parent.kind : parent.method ? "method" : fn.type === "ArrowFunctionExpression" ? "arrow" : "function";
    return { ...base, kind, methodKey: parent.method || parent.kind !== "init" ? parent.key : null, name: keyName(parent.key, parent.computed) };
  }
  const kind = fn.type === "ArrowFunctionExpression" ? "arrow" : "function";
  return { ...base, kind, methodKey: null, name: fn.id?.name ?? nameFromParent(parent) };
}

/** `const f = () => …`, `obj.f = function () {…}`: the name the function is known by. */
function nameFromParent(parent: AnyNode | null): string | null {
  if (parent?.type === "VariableDeclarator" && parent.id.type === "Identifier") return parent.id.name;
  if (parent?.type === "AssignmentExpression") {
    if (parent.left.type === "Identifier") return parent.left.name;
    if (parent.left.type === "MemberExpression") return keyName(parent.left.property, parent.left.computed);
  }
  if (parent?.type === "PropertyDefinition") return keyName(parent.key, parent.computed);
  return null;
}

/** A variable of the script: its name and where it is declared (async-transform-scope.ts resolves names to these). */
export interface Binding {
  readonly name: string;
  /** The function (or the program) it belongs to: each call of a function copied per call has its own. */
  readonly declaredIn: AnyNode;
}
