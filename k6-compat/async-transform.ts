/**
 * k6 scripts are synchronous: `http.get()` returns the response, `sleep(1)` blocks the VU.
 * A Worker cannot block, so before a script runs in a shard its code is rewritten into the
 * async JavaScript that means the same thing: every call that may block is awaited, and
 * every function that (transitively) makes such a call becomes `async`.
 *
 * Which calls may block is found by colouring, as a compiler finds which functions throw:
 *
 *  1. The roots are the compat layer's blocking functions. The bundle (bundle.ts) imports
 *     them under marked names, `__k6async_<module>_<name>` for named imports and
 *     `__k6asyncns_<module>.<name>` through a module's default object, so they can be told
 *     apart from any user function after bundling.
 *  2. A function containing an awaited call is async; a call to it, by its name (a
 *     declaration or `const f = …`) or, through an object, by its property name (a method,
 *     `obj.m = function …`), is awaited. Repeat until nothing changes.
 *  3. An async function passed to `group()` is awaited by group itself. Passed to
 *     `.forEach()` or `.map()`, the call becomes `__k6seq.forEach(list, fn)` (runs the
 *     callbacks one after another, as k6 would). Passed anywhere else (`.filter`, `sort`,
 *     `setTimeout`), it would run detached: refused, with its line.
 *
 * Names are matched without scope analysis: a call that shares a name with an async
 * function is awaited even when it means another one. Awaiting a plain value is harmless
 * (it only yields), so the approximation errs on the side that keeps meaning.
 *
 * The code given is one function expression (the bundle's per-VU factory); its own body is
 * the init context, where k6 allows no requests and no sleep: a blocking call there is a
 * problem, not rewritten.
 */
import { parse, type Node } from "acorn";

export interface AsyncRoots {
  /** Named imports that block: `__k6async_http_get` and the like. */
  readonly isAsyncName: (name: string) => boolean;
  /** Members of a module object that block: (`__k6asyncns_http`, `get`). */
  readonly isAsyncMember: (object: string, property: string) => boolean;
}

export type AsyncTransform = { ok: true; code: string } | { ok: false; problems: string[] };

/** The runtime helper that runs async callbacks of forEach/map in order (runtime/sequence.ts). */
export const SEQUENCE_HELPER = "__k6seq";
const SEQUENCED = new Set(["forEach", "map"]);

type AnyNode = Node & Record<string, any>;

interface FunctionInfo {
  readonly node: AnyNode;
  /** The name calls reach it by, and whether through an object (a method) or directly. */
  readonly name: string | null;
  readonly method: boolean;
  /** The call it is an argument of, if any. */
  readonly argumentOf: AnyNode | null;
  readonly parent: FunctionInfo | null;
}

interface CallInfo {
  readonly node: AnyNode;
  readonly within: FunctionInfo | null;
}

export function makeBlockingCallsAwaited(code: string, roots: AsyncRoots): AsyncTransform {
  let program: AnyNode;
  try {
    program = parse(code, { ecmaVersion: "latest", sourceType: "script", locations: true }) as AnyNode;
  } catch (error) {
    return { ok: false, problems: [`the bundled script does not parse: ${(error as Error).message}`] };
  }
  const functions: FunctionInfo[] = [];
  const calls: CallInfo[] = [];
  const aliases = new Map<string, string>();
  collect(program, null, null, functions, calls, aliases);
  // `var http_default = __k6asyncns_http`: esbuild's names for an import are aliases.
  const aliasOf = (name: string, test: (n: string) => boolean) => {
    for (let seen = 0; seen < 16; seen++) {
      if (test(name)) return true;
      const next = aliases.get(name);
      if (next === undefined) return false;
      name = next;
    }
    return false;
  };
  const byNode = new Map(functions.map((f) => [f.node, f]));

  const asyncFunctions = new Set<FunctionInfo>();
  const asyncNames = new Set<string>();
  const asyncMethods = new Set<string>();
  const awaited = new Set<AnyNode>();
  const sequenced = new Set<AnyNode>();

  const blocks = (call: AnyNode): boolean => {
    const callee = call.callee;
    if (callee.type === "Identifier") return aliasOf(callee.name, roots.isAsyncName) || asyncNames.has(callee.name);
    if (callee.type === "MemberExpression" && !callee.computed && callee.property.type === "Identifier") {
      const property = callee.property.name as string;
      if (callee.object.type === "Identifier" && aliasOf(callee.object.name, (o) => roots.isAsyncMember(o, property))) return true;
      if (asyncMethods.has(property)) return true;
      // list.forEach(async callback): sequenced, so it blocks.
      if (SEQUENCED.has(property)) return call.arguments.some((a: AnyNode) => isAsyncFunction(a));
    }
    return false;
  };
  const isAsyncFunction = (node: AnyNode): boolean => {
    const info = byNode.get(node);
    return info !== undefined && asyncFunctions.has(info);
  };

  for (let changed = true; changed; ) {
    changed = false;
    for (const call of calls) {
      if (awaited.has(call.node) || !blocks(call.node)) continue;
      awaited.add(call.node);
      changed = true;
      const callee = call.node.callee;
      if (
        callee.type === "MemberExpression" &&
        SEQUENCED.has(callee.property?.name) &&
        !aliasOf(callee.object?.name ?? "", (o) => roots.isAsyncMember(o, callee.property.name)) &&
        !asyncMethods.has(callee.property.name)
      ) {
        sequenced.add(call.node);
      }
      const within = call.within;
      if (within && !asyncFunctions.has(within)) {
        asyncFunctions.add(within);
        if (within.name) (within.method ? asyncMethods : asyncNames).add(within.name);
      }
    }
  }

  const problems: string[] = [];
  // Lines are the bundle's; the line's own text says where in the script it is.
  const lines = code.split("\n");
  const where = (node: AnyNode) => {
    const text = unmark(lines[node.loc!.start.line - 1]!.trim());
    return `line ${node.loc!.start.line} (\`${text.length > 80 ? `${text.slice(0, 77)}...` : text}\`)`;
  };
  for (const call of calls) {
    if (!awaited.has(call.node)) continue;
    // The outermost function is the init context (see the header).
    if (!call.within || call.within.parent === null) {
      problems.push(
        `${where(call.node)}: ${describe(call.node)} in the init context: k6 allows requests and sleep only in VU code (default, setup, teardown, scenario functions)`,
      );
    }
  }
  for (const fn of asyncFunctions) {
    const node = fn.node;
    if (node.generator) problems.push(`${where(node)}: a generator function that makes requests or sleeps is not supported`);
    if (node.kind === "get" || node.kind === "set" || node.kind === "constructor")
      problems.push(`${where(node)}: a ${node.kind === "constructor" ? "constructor" : `${node.kind}ter`} that makes requests or sleeps is not supported`);
    // A callback runs detached unless what it is passed to waits for it.
    const host = fn.argumentOf;
    if (host && !awaited.has(host)) {
      problems.push(
        `${where(node)}: a callback that makes requests or sleeps, passed to ${describe(host)}: edgeload runs such callbacks in group(), forEach() and map(), or write a for…of loop`,
      );
    }
  }
  if (problems.length) return { ok: false, problems };

  const edits: Edit[] = [];
  for (const fn of asyncFunctions) {
    const node = fn.node;
    // A method's `async` goes before its key (`async m() {}`, `static async m() {}`).
    const at = node.methodKey ? node.methodKey.start : node.start;
    edits.push({ at, end: at, text: "async ", span: 0 });
  }
  for (const call of awaited) {
    const span = call.end - call.start;
    if (sequenced.has(call)) {
      // list.forEach(fn) → __k6seq.forEach(list, fn)
      const callee = call.callee;
      const method = callee.property.name as string;
      edits.push({ at: call.start, end: call.start, text: `(await ${SEQUENCE_HELPER}.${method}(`, span });
      const firstArgument = call.arguments[0];
      edits.push({ at: callee.object.end, end: firstArgument ? firstArgument.start : call.end - 1, text: firstArgument ? ", " : "", span: AFTER_CLOSINGS });
      edits.push({ at: call.end, end: call.end, text: ")", span: -span });
    } else {
      edits.push({ at: call.start, end: call.start, text: "(await ", span });
      edits.push({ at: call.end, end: call.end, text: ")", span: -span });
    }
  }
  return { ok: true, code: applyEdits(code, edits) };
}

/** Orders the forEach/map rewrite after any call closing at the same offset (the list may be one). */
const AFTER_CLOSINGS = -Number.MAX_SAFE_INTEGER;

interface Edit {
  readonly at: number;
  readonly end: number;
  readonly text: string;
  /**
   * Orders edits at the same offset: openings of longer calls first (the outer call opens
   * before the inner one), closings of shorter calls first (the inner closes first).
   */
  readonly span: number;
}

function applyEdits(code: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.at - b.at || closingsFirst(a, b) || b.span - a.span);
  let out = "";
  let from = 0;
  for (const e of sorted) {
    out += code.slice(from, e.at) + e.text;
    from = Math.max(from, e.end);
  }
  return out + code.slice(from);
}

/** At one offset a closing `)` (negative span) goes before any opening. */
function closingsFirst(a: Edit, b: Edit): number {
  return (a.span < 0 ? 0 : 1) - (b.span < 0 ? 0 : 1);
}

const FUNCTION_TYPES = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** Walks the tree, recording each function with the name calls reach it by, and each call. */
function collect(
  node: AnyNode,
  within: FunctionInfo | null,
  parent: AnyNode | null,
  functions: FunctionInfo[],
  calls: CallInfo[],
  aliases: Map<string, string>,
): void {
  let inner = within;
  if (FUNCTION_TYPES.has(node.type)) {
    const named = nameOf(node, parent);
    const info: FunctionInfo = {
      node,
      name: named.name,
      method: named.method,
      parent: within,
      argumentOf: parent?.type === "CallExpression" && parent.arguments.includes(node) ? parent : null,
    };
    if (named.methodKey) node.methodKey = named.methodKey;
    if (named.kind) node.kind = named.kind;
    functions.push(info);
    inner = info;
  }
  if (node.type === "CallExpression") calls.push({ node, within });
  if (node.type === "VariableDeclarator" && node.id.type === "Identifier" && node.init?.type === "Identifier") aliases.set(node.id.name, node.init.name);
  for (const key of Object.keys(node)) {
    if (key === "loc" || key === "methodKey") continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const child of value) if (child && typeof child.type === "string") collect(child, inner, node, functions, calls, aliases);
    } else if (value && typeof value === "object" && typeof value.type === "string") {
      collect(value, inner, node, functions, calls, aliases);
    }
  }
}

function nameOf(fn: AnyNode, parent: AnyNode | null): { name: string | null; method: boolean; methodKey?: AnyNode; kind?: string } {
  if (fn.type === "FunctionDeclaration") return { name: fn.id?.name ?? null, method: false };
  if (!parent) return { name: null, method: false };
  if (parent.type === "VariableDeclarator" && parent.id.type === "Identifier") return { name: parent.id.name, method: false };
  const keyName = (key: AnyNode) => (key.type === "Identifier" ? key.name : key.type === "Literal" ? String(key.value) : null);
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

/** Code as the user wrote it, without the bundle's marks: `__k6async_http_get(` → `get(`. */
const unmark = (text: string) => text.replace(/__k6async_[a-z0-9]+_/g, "").replace(/__k6asyncns_([a-z0-9]+)/g, "$1");

/** A call as a message names it: `http.get()`, `sleep()`, `list.filter()`. */
function describe(call: AnyNode): string {
  const callee = call.callee;
  const clean = unmark;
  if (callee.type === "Identifier") return `${clean(callee.name)}()`;
  if (callee.type === "MemberExpression" && !callee.computed) {
    const object = callee.object.type === "Identifier" ? `${clean(callee.object.name)}.` : "";
    return `${object}${callee.property.name}()`;
  }
  return "a call";
}
