/**
 * Which declaration each name in the bundle means, for the async rewrite's flow analysis
 * (async-transform-flow.ts): a `get` inside one helper is not the `get` of another, and a
 * parameter `fn` hides an outer `fn`. Without this, values would flow between unrelated
 * functions that happen to share a name, and a call could be missed or awaited for nothing.
 *
 * ECMAScript's scoping (ECMA-262 §9.1), as a bundle uses it: `var` and parameters belong to
 * the nearest function; `let`, `const`, `class` and function declarations to the nearest
 * block; a catch parameter to its clause; a named function or class expression sees its own
 * name. Annex B's sloppy-mode hoisting of a function declared in a block is not modelled:
 * esbuild's output declares functions at the top of their function.
 */
import { type SelfAssignment, splitSelfAssignments } from "./async-transform-self-assign.ts";
import type { AnyNode, Binding } from "./async-transform-walk.ts";
import { FUNCTION_TYPES, forEachChild } from "./async-transform-walk.ts";

/** One declared name. */
export type { Binding } from "./async-transform-walk.ts";

export interface Names {
  /** What every identifier of the program refers to: its binding, or null for a global. */
  readonly refs: ReadonlyMap<AnyNode, Binding | null>;
  /** Each non-arrow function's `arguments`, when its code reads it (else nothing can see it). */
  readonly argumentsOf: ReadonlyMap<AnyNode, Binding>;
  /**
   * A parameter redeclared at its function's top level (`var n = n(0)`, minified webpack's
   * reuse of require's parameter) has a second binding for what follows; this maps it to
   * the parameter's when a closure reads the parameter, for the closure may run later.
   */
  readonly laterValueOf: ReadonlyMap<Binding, Binding>;
  /** The bindings of functions' parameters (plain names). */
  readonly parameters: ReadonlySet<Binding>;
  /** For a variable, its self-assignments' bindings (async-transform-self-assign.ts). */
  readonly selfAssignments: ReadonlyMap<Binding, readonly SelfAssignment[]>;
  /** The bindings something assigns after their declaration (async-transform-keys.ts trusts a parameter's key only if none does). */
  readonly written: ReadonlySet<Binding>;
}

interface Scope {
  readonly parent: Scope | null;
  /** The function (or the program) the scope is in. */
  readonly owner: AnyNode;
  /** A function's (or the program's) scope, where `var` goes. */
  readonly isFunction: boolean;
  readonly names: Map<string, Binding>;
}

const BLOCK_SCOPES = new Set(["BlockStatement", "ForStatement", "ForInStatement", "ForOfStatement", "SwitchStatement", "CatchClause", "StaticBlock"]);

/** Resolves every identifier of `program` to the binding it names. */
export function resolveNames(program: AnyNode): Names {
  const scopes = new Map<AnyNode, Scope>();
  declare(program, null, scopes);
  const refs = new Map<AnyNode, Binding | null>();
  resolve(program, null, null, scopes, refs);
  const argumentsOf = new Map<AnyNode, Binding>();
  const read = new Set(refs.values());
  for (const [node, scope] of scopes) {
    const args = FUNCTION_TYPES.has(node.type) ? scope.names.get("arguments") : undefined;
    if (args && read.has(args)) argumentsOf.set(node, args);
  }
  const laterValueOf = splitRedeclaredParameters(program, refs);
  const selfAssignments = splitSelfAssignments(program, refs);
  const parameters = new Set<Binding>();
  for (const node of scopes.keys())
    if (FUNCTION_TYPES.has(node.type)) for (const p of node.params) if (p.type === "Identifier" && refs.get(p)) parameters.add(refs.get(p)!);
  return { refs, argumentsOf, laterValueOf, selfAssignments, parameters, written: writtenBindings(program, refs, laterValueOf) };
}

/**
 * What assignments, updates, `for (x in/of …)`, declarations with a value and function or
 * class declarations write to (a parameter's own binding by its call is not counted), and
 * the parameters that receive a later binding's values.
 */
function writtenBindings(program: AnyNode, refs: ReadonlyMap<AnyNode, Binding | null>, laterValueOf: ReadonlyMap<Binding, Binding>): Set<Binding> {
  const written = new Set<Binding>(laterValueOf.values());
  const write = (pattern: AnyNode | null) => {
    if (pattern?.type === "MemberExpression") return;
    for (const id of patternNames(pattern)) {
      const binding = refs.get(id);
      if (binding) written.add(binding);
    }
  };
  const visit = (node: AnyNode) => {
    if (node.type === "AssignmentExpression") write(node.left);
    else if (node.type === "UpdateExpression" && node.argument.type === "Identifier") write(node.argument);
    else if (node.type === "ForInStatement" || node.type === "ForOfStatement")
      write(node.left.type === "VariableDeclaration" ? node.left.declarations[0].id : node.left);
    else if (node.type === "VariableDeclarator" && node.init) write(node.id);
    else if ((node.type === "FunctionDeclaration" || node.type === "ClassDeclaration") && node.id) write(node.id);
    forEachChild(node, visit);
  };
  visit(program);
  return written;
}

function splitRedeclaredParameters(program: AnyNode, refs: Map<AnyNode, Binding | null>): Map<Binding, Binding> {
  const laterValueOf = new Map<Binding, Binding>();
  const visit = (node: AnyNode) => {
    if (FUNCTION_TYPES.has(node.type) && node.body?.type === "BlockStatement") splitIn(node, refs, laterValueOf);
    forEachChild(node, visit);
  };
  visit(program);
  return laterValueOf;
}

function splitIn(fn: AnyNode, refs: Map<AnyNode, Binding | null>, laterValueOf: Map<Binding, Binding>): void {
  const params = new Set(fn.params.flatMap((p: AnyNode) => patternNames(p).map((id) => id.name as string)));
  for (const statement of fn.body.body as AnyNode[]) {
    for (const { id, end } of redeclarations(statement)) {
      const parameter = params.has(id.name) ? refs.get(id) : null;
      if (!parameter || parameter.declaredIn !== fn || assignedInClosure(fn, parameter, refs)) continue;
      const later: Binding = { name: parameter.name, declaredIn: fn };
      if (readInClosure(fn, parameter, refs)) laterValueOf.set(later, parameter);
      refs.set(id, later);
      ownIdentifiers(fn.body, (ref) => {
        if (ref.start >= end && refs.get(ref) === parameter) refs.set(ref, later);
      });
      params.delete(id.name);
    }
  }
}

function redeclarations(statement: AnyNode): Array<{ id: AnyNode; end: number }> {
  if (statement.type === "VariableDeclaration" && statement.kind === "var")
    return (statement.declarations as AnyNode[]).filter((d) => d.id.type === "Identifier" && d.init).map((d) => ({ id: d.id, end: d.end }));
  const e = statement.type === "ExpressionStatement" ? statement.expression : null;
  if (e?.type === "AssignmentExpression" && e.operator === "=" && e.left.type === "Identifier") return [{ id: e.left, end: e.end }];
  return [];
}

function ownIdentifiers(node: AnyNode, each: (id: AnyNode) => void): void {
  if (node.type === "Identifier") each(node);
  forEachChild(node, (child) => {
    if (!FUNCTION_TYPES.has(child.type)) ownIdentifiers(child, each);
  });
}

function readInClosure(fn: AnyNode, binding: Binding, refs: ReadonlyMap<AnyNode, Binding | null>): boolean {
  let found = false;
  const search = (node: AnyNode, nested: boolean) => {
    if (found) return;
    if (nested && node.type === "Identifier" && refs.get(node) === binding) found = true;
    forEachChild(node, (child) => search(child, nested || FUNCTION_TYPES.has(child.type)));
  };
  search(fn.body, false);
  return found;
}

function assignedInClosure(fn: AnyNode, binding: Binding, refs: ReadonlyMap<AnyNode, Binding | null>): boolean {
  let found = false;
  const search = (node: AnyNode, nested: boolean) => {
    if (found) return;
    const target = node.type === "AssignmentExpression" ? node.left : node.type === "UpdateExpression" ? node.argument : null;
    if (nested && target?.type === "Identifier" && refs.get(target) === binding) found = true;
    forEachChild(node, (child) => search(child, nested || FUNCTION_TYPES.has(child.type)));
  };
  search(fn.body, false);
  return found;
}

function newScope(node: AnyNode, parent: Scope | null, isFunction: boolean, scopes: Map<AnyNode, Scope>): Scope {
  const owner = FUNCTION_TYPES.has(node.type) || !parent ? node : parent.owner;
  const scope: Scope = { parent, owner, isFunction, names: new Map() };
  scopes.set(node, scope);
  return scope;
}

function add(scope: Scope, name: string): void {
  if (!scope.names.has(name)) scope.names.set(name, { name, declaredIn: scope.owner });
}

function functionScopeOf(scope: Scope): Scope {
  let s = scope;
  while (!s.isFunction && s.parent) s = s.parent;
  return s;
}

/** The names a binding pattern declares: `a`, `{ a, b: [c] }`, `...rest`, `x = 1`. */
export function patternNames(pattern: AnyNode | null, out: AnyNode[] = []): AnyNode[] {
  if (!pattern) return out;
  switch (pattern.type) {
    case "Identifier":
      out.push(pattern);
      break;
    case "ObjectPattern":
      for (const p of pattern.properties) patternNames(p.type === "RestElement" ? p.argument : p.value, out);
      break;
    case "ArrayPattern":
      for (const e of pattern.elements) patternNames(e, out);
      break;
    case "RestElement":
      patternNames(pattern.argument, out);
      break;
    case "AssignmentPattern":
      patternNames(pattern.left, out);
      break;
  }
  return out;
}

/** First pass: every scope and the names declared in it (hoisting needs them all before any use). */
function declare(node: AnyNode, scope: Scope | null, scopes: Map<AnyNode, Scope>): void {
  let inner = scope;
  if (node.type === "Program") inner = newScope(node, null, true, scopes);
  else if (FUNCTION_TYPES.has(node.type)) {
    if (node.type === "FunctionDeclaration" && node.id) add(scope!, node.id.name);
    inner = newScope(node, scope, true, scopes);
    if (node.type === "FunctionExpression" && node.id) add(inner, node.id.name);
    for (const param of node.params) for (const id of patternNames(param)) add(inner, id.name);
    if (node.type !== "ArrowFunctionExpression") add(inner, "arguments");
  } else if (node.type === "ClassDeclaration" || node.type === "ClassExpression") {
    if (node.type === "ClassDeclaration" && node.id) add(scope!, node.id.name);
    inner = newScope(node, scope, false, scopes);
    // A declaration's name is the outer binding; an expression's is seen only inside it.
    if (node.type === "ClassExpression" && node.id) add(inner, node.id.name);
  } else if (BLOCK_SCOPES.has(node.type)) {
    inner = newScope(node, scope, node.type === "StaticBlock", scopes);
    if (node.type === "CatchClause") for (const id of patternNames(node.param)) add(inner, id.name);
  } else if (node.type === "VariableDeclaration") {
    const target = node.kind === "var" ? functionScopeOf(scope!) : scope!;
    for (const d of node.declarations) for (const id of patternNames(d.id)) add(target, id.name);
  }
  forEachChild(node, (child) => {
    // A function's body block is its own scope's: `let` in it sits beside the parameters.
    if (FUNCTION_TYPES.has(node.type) && child === node.body && child.type === "BlockStatement") {
      scopes.set(child, inner!);
      forEachChild(child, (c) => declare(c, inner, scopes));
      return;
    }
    declare(child, inner, scopes);
  });
}

function lookup(scope: Scope | null, name: string): Binding | null {
  for (let s = scope; s; s = s.parent) {
    const b = s.names.get(name);
    if (b) return b;
  }
  return null;
}

/** Second pass: each identifier that names a variable, looked up from where it stands. */
function resolve(node: AnyNode, parent: AnyNode | null, scope: Scope | null, scopes: Map<AnyNode, Scope>, refs: Map<AnyNode, Binding | null>): void {
  const own = scopes.get(node);
  const here = own ?? scope;
  if (node.type === "Identifier") {
    if (isReference(node, parent)) refs.set(node, lookup(here, node.name));
    return;
  }
  // A declaration's own name is declared outside it.
  const declared = (node.type === "FunctionDeclaration" || node.type === "ClassDeclaration") && node.id ? node.id : null;
  forEachChild(node, (child) => resolve(child, node, child === declared ? scope : here, scopes, refs));
}

/** Whether an identifier names a variable, not a property, a key or a label. */
function isReference(id: AnyNode, parent: AnyNode | null): boolean {
  if (!parent) return true;
  switch (parent.type) {
    case "MemberExpression":
      return parent.object === id || parent.computed;
    case "Property":
      // `{ a }` has a key and a value node: the value is the reference.
      return parent.value === id || (parent.computed && parent.key === id);
    case "MethodDefinition":
    case "PropertyDefinition":
      return parent.computed && parent.key === id;
    case "LabeledStatement":
    case "BreakStatement":
    case "ContinueStatement":
    case "MetaProperty":
      return false;
    default:
      return true;
  }
}
