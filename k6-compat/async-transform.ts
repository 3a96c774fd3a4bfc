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
 *     callbacks one after another, as k6 would). Passed to one of the script's own
 *     functions (its modules' included: k6chaijs's `describe(name, fn)`), the parameter
 *     that receives it blocks there: calling it (`fn()`, `fn.call(…)`) is awaited, so that
 *     function becomes async and its callers await it; handed on to another function, the
 *     same holds there. A module reached through esbuild's CommonJS view of it
 *     (`(0, k6.group)(…)`, a jslib bundle that `require`s k6) is followed through its
 *     export object's getters (async-transform-walk.ts). Passed anywhere else (`.filter`,
 *     `sort`, `setTimeout`, a function that keeps it for later), it would run detached:
 *     refused, with its line.
 *
 * Names are matched without scope analysis: a call that shares a name with an async
 * function is awaited even when it means another one. Awaiting a plain value is harmless
 * (it only yields), so the approximation errs on the side that keeps meaning.
 *
 * The code given is one function expression (the bundle's per-VU factory); its own body is
 * the init context, where k6 allows no requests and no sleep: a blocking call there is a
 * problem, not rewritten.
 */
import { parse } from "acorn";
import { type AnyNode, type FunctionInfo, unwrapCallee, walkBundle } from "./async-transform-walk.ts";

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
/** `f.call(this, …)` and `f.apply(this, args)` call f. */
const INDIRECT_CALLS = new Set(["call", "apply"]);

export function makeBlockingCallsAwaited(code: string, roots: AsyncRoots): AsyncTransform {
  let program: AnyNode;
  try {
    program = parse(code, { ecmaVersion: "latest", sourceType: "script", locations: true }) as AnyNode;
  } catch (error) {
    return { ok: false, problems: [`the bundled script does not parse: ${(error as Error).message}`] };
  }
  const { functions, calls, aliases, exportObjects, getters } = walkBundle(program);
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
  /** The local name `object.property` reads through a module's export object, if any. */
  const exportedLocal = (object: string, property: string): string | null => {
    for (let seen = 0; seen < 16; seen++) {
      const local = exportObjects.get(object)?.get(property);
      if (local !== undefined) return local;
      const next = aliases.get(object);
      if (next === undefined) return null;
      object = next;
    }
    return null;
  };
  const byNode = new Map(functions.map((f) => [f.node, f]));
  const byName = new Map<string, FunctionInfo[]>();
  const byMethod = new Map<string, FunctionInfo[]>();
  for (const f of functions) {
    if (f.name === null) continue;
    const book = f.method ? byMethod : byName;
    book.set(f.name, [...(book.get(f.name) ?? []), f]);
  }

  const asyncFunctions = new Set<FunctionInfo>();
  const asyncNames = new Set<string>();
  const asyncMethods = new Set<string>();
  /** Parameters that receive a blocking callback: calling one blocks, in its function. */
  const asyncParams = new Map<FunctionInfo, Set<string>>();
  const awaited = new Set<AnyNode>();
  const sequenced = new Set<AnyNode>();

  const nameBlocks = (name: string) => aliasOf(name, roots.isAsyncName) || asyncNames.has(name);
  /** Whether `name`, seen from `within`, is a parameter given a blocking callback (an inner parameter of the same name hides it). */
  const isAsyncParam = (name: string, within: FunctionInfo | null): boolean => {
    for (let f = within; f; f = f.parent) {
      if (asyncParams.get(f)?.has(name)) return true;
      if (f.params.includes(name)) return false;
    }
    return false;
  };
  const blocks = (call: AnyNode, within: FunctionInfo | null): boolean => {
    const callee = unwrapCallee(call.callee);
    if (callee.type === "Identifier") return nameBlocks(callee.name) || isAsyncParam(callee.name, within);
    if (callee.type === "MemberExpression" && !callee.computed && callee.property.type === "Identifier") {
      const property = callee.property.name as string;
      const object = callee.object.type === "Identifier" ? (callee.object.name as string) : null;
      if (object !== null && aliasOf(object, (o) => roots.isAsyncMember(o, property))) return true;
      if (asyncMethods.has(property)) return true;
      // A module's export read through its CommonJS view: `(0, k6.group)(…)`.
      const local = object === null ? null : exportedLocal(object, property);
      if (local !== null && nameBlocks(local)) return true;
      // fn.call(this, …) where fn is a blocking callback.
      if (object !== null && INDIRECT_CALLS.has(property) && (asyncNames.has(object) || isAsyncParam(object, within))) return true;
      // list.forEach(async callback): sequenced, so it blocks.
      if (SEQUENCED.has(property)) return call.arguments.some((a: AnyNode) => isAsyncArgument(a, within));
    }
    return false;
  };
  /** A function that blocks, passed as an argument: inline, by its name, or a parameter that holds one. */
  const isAsyncArgument = (node: AnyNode, within: FunctionInfo | null): boolean => {
    const info = byNode.get(node);
    if (info !== undefined) return asyncFunctions.has(info);
    return node.type === "Identifier" && (asyncNames.has(node.name) || isAsyncParam(node.name, within));
  };
  /** The script's own functions a call may reach (by name; a method by its property name, or an export's getter). */
  const calledFunctions = (call: AnyNode): FunctionInfo[] => {
    const callee = unwrapCallee(call.callee);
    if (callee.type === "Identifier") return byName.get(callee.name) ?? [];
    if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier") return [];
    const property = callee.property.name as string;
    const locals = new Set(getters.get(property));
    const exported = callee.object.type === "Identifier" ? exportedLocal(callee.object.name, property) : null;
    if (exported !== null) locals.add(exported);
    return [...(byMethod.get(property) ?? []), ...[...locals].flatMap((l) => byName.get(l) ?? [])];
  };

  for (let changed = true; changed; ) {
    changed = false;
    for (const call of calls) {
      // A blocking callback passed to one of the script's functions makes that parameter
      // blocking inside it: the function awaits it, and so becomes async itself.
      call.node.arguments.forEach((argument: AnyNode, i: number) => {
        if (!isAsyncArgument(argument, call.within)) return;
        for (const target of calledFunctions(call.node)) {
          const param = target.params[i];
          if (param === null || param === undefined) continue;
          const held = asyncParams.get(target) ?? new Set<string>();
          if (held.has(param)) continue;
          asyncParams.set(target, held.add(param));
          changed = true;
        }
      });
      if (awaited.has(call.node) || !blocks(call.node, call.within)) continue;
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
    // An export's getter `key: () => f` of an async f: `module.key()` blocks. Not
    // `default`: every module's default export would make every `x.default()` awaited.
    for (const [key, locals] of getters) {
      if (key !== "default" && !asyncMethods.has(key) && [...locals].some((l) => asyncNames.has(l))) {
        asyncMethods.add(key);
        changed = true;
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

/** Code as the user wrote it, without the bundle's marks: `__k6async_http_get(` → `get(`. */
const unmark = (text: string) => text.replace(/__k6async_[a-z0-9]+_/g, "").replace(/__k6asyncns_([a-z0-9]+)/g, "$1");

/** A call as a message names it: `http.get()`, `sleep()`, `list.filter()`. */
function describe(call: AnyNode): string {
  const callee = unwrapCallee(call.callee);
  const clean = unmark;
  if (callee.type === "Identifier") return `${clean(callee.name)}()`;
  if (callee.type === "MemberExpression" && !callee.computed) {
    const object = callee.object.type === "Identifier" ? `${clean(callee.object.name)}.` : "";
    return `${object}${callee.property.name}()`;
  }
  return "a call";
}
