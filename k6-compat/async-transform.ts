/**
 * k6 scripts are synchronous: `http.get()` returns the response, `sleep(1)` blocks the VU.
 * A Worker cannot block, so before a script runs in a shard its code is rewritten into the
 * async JavaScript that means the same thing: every call that may block is awaited, and
 * every function that (transitively) makes such a call becomes `async`.
 *
 * Which calls may block is found by colouring (async-transform-colour.ts), as a compiler
 * finds which functions throw:
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
import { type AsyncRoots, type Colours, colourBlockingCalls } from "./async-transform-colour.ts";
import { type AnyNode, type CallInfo, unwrapCallee, walkBundle } from "./async-transform-walk.ts";

export type { AsyncRoots } from "./async-transform-colour.ts";

export type AsyncTransform = { ok: true; code: string } | { ok: false; problems: string[] };

/** The runtime helper that runs async callbacks of forEach/map in order (runtime/vu-modules.ts `sequence`). */
export const SEQUENCE_HELPER = "__k6seq";

export function makeBlockingCallsAwaited(code: string, roots: AsyncRoots): AsyncTransform {
  let program: AnyNode;
  try {
    program = parse(code, { ecmaVersion: "latest", sourceType: "script", locations: true }) as AnyNode;
  } catch (error) {
    return { ok: false, problems: [`the bundled script does not parse: ${(error as Error).message}`] };
  }
  const syntax = walkBundle(program);
  const colours = colourBlockingCalls(syntax, roots);
  const problems = problemsOf(code, syntax.calls, colours);
  if (problems.length) return { ok: false, problems };
  return { ok: true, code: applyEdits(code, editsOf(colours)) };
}

/** What the rewrite cannot make mean the same thing, each with the bundle's line. */
function problemsOf(code: string, calls: readonly CallInfo[], { asyncFunctions, awaited }: Colours): string[] {
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
  return problems;
}

/** The rewrite as edits of the bundle's text: `async` before each async function, `(await …)` around each awaited call. */
function editsOf({ asyncFunctions, awaited, sequenced }: Colours): Edit[] {
  const edits: Edit[] = [];
  for (const fn of asyncFunctions) {
    const node = fn.node;
    // Already async as written: `async async function` would not parse.
    if (node.async) continue;
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
  return edits;
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
