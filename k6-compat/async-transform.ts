/**
 * k6 scripts are synchronous: `http.get()` returns the response, `sleep(1)` blocks the VU.
 * A Worker cannot block, so before a script runs in a shard its code is rewritten into the
 * async JavaScript that means the same thing: every call that may block is awaited, and
 * every function that (transitively) makes such a call becomes `async`.
 *
 * The rule is "when in doubt, await" (awaiting a value that is not a promise only yields):
 *
 *  1. The roots are the compat layer's blocking functions. The bundle (bundle.ts) imports
 *     them under marked names, `__k6async_<module>_<name>` for named imports and
 *     `__k6asyncns_<module>.<name>` through a module's default object.
 *  2. What each call may call is found by following the script's functions and objects
 *     wherever they go (async-transform-flow.ts): returned in an object, kept in a variable,
 *     an array or a class, handed to a helper, read back through `this` or a module's
 *     exports. A value from code the analysis does not see (a builtin's result, a callback's
 *     argument) may be any function that escaped there.
 *  3. A function that may reach a root becomes async, and every call that may run such a
 *     function is awaited (async-transform-colour.ts). Functions the script wrote `async`
 *     keep their one `async`, and calls of them are left as written: they return a promise
 *     under k6 too.
 *  4. A function that cannot be async — the init context, where k6 allows no requests, a
 *     getter, a setter, a constructor, a generator, a callback of code that uses its result
 *     at once (`check`, `filter`, `sort`, a timer) — is refused when it surely blocks, with
 *     its line; when it only may, its doubtful calls are checked at run time and throw,
 *     with their line, if one gave a promise. Callbacks of `group()` are awaited by group;
 *     of `forEach()`/`map()`, run one after another by a helper appended to the bundle, as
 *     k6 runs them.
 *
 * The code given is one function expression (the bundle's per-VU factory) and is edited in
 * place: no line is added or removed, so errors' lines still map to the script's
 * (source-lines.ts); the helpers go after its last line.
 */
import { parse } from "acorn";
import { type Colours, colourBlockingCalls } from "./async-transform-colour.ts";
import { analyseFlow } from "./async-transform-flow.ts";
import { type AsyncRoots, unmarked } from "./async-transform-heap.ts";
import { type AnyNode, type FunctionInfo, unwrapCallee, walkBundle } from "./async-transform-walk.ts";

export type { AsyncRoots } from "./async-transform-heap.ts";

export type AsyncTransform = { ok: true; code: string } | { ok: false; problems: string[] };

/** Runs the callbacks of an awaited `list.forEach(fn)` / `list.map(fn)` one after another (see IN_ORDER_HELPER). */
export const IN_ORDER = "__k6inOrder";
/** Holds a checked call's value for a moment (see guardText). */
const HELD = "__k6held";

/**
 * `list.forEach(fn, self)`, `list.map(fn, self)` and `selection.each(fn)` with async
 * callbacks, awaited one by one: over an array as Array.prototype does (holes skipped, its
 * length read once); over anything else with the method (a Map, a Set, a k6/html Selection),
 * the calls its own method makes, in its order, with its arguments, and its own kind of
 * result (map's made by its own map, each's the selection itself).
 */
const IN_ORDER_HELPER = [
  `async function ${IN_ORDER}(list, method, fn, self) {`,
  "if (list == null) { if (method[0] === '?') return undefined; throw new TypeError('Cannot read properties of ' + list + \" (reading '\" + method + \"')\"); }",
  "method = method.replace('?', '');",
  "if (Array.isArray(list)) { const n = list.length; const out = method === 'map' ? new Array(n) : undefined;",
  "for (let i = 0; i < n; i++) if (i in list) { const v = await fn.call(self, list[i], i, list); if (out) out[i] = v; } return out; }",
  "const calls = []; list[method](function (...args) { calls.push(args); });",
  "const results = []; for (const args of calls) results.push(await fn.apply(self, args));",
  "if (method === 'each') return list; if (method !== 'map') return undefined; let i = 0; return list.map(() => results[i++]); }",
].join(" ");

export function makeBlockingCallsAwaited(code: string, roots: AsyncRoots): AsyncTransform {
  let program: AnyNode;
  try {
    program = parse(code, { ecmaVersion: "latest", sourceType: "script", locations: true }) as AnyNode;
  } catch (error) {
    return { ok: false, problems: [`the bundled script does not parse: ${(error as Error).message}`] };
  }
  const syntax = walkBundle(program);
  const colours = colourBlockingCalls(syntax, analyseFlow(program, syntax, roots));
  const problems = problemsOf(code, colours);
  if (problems.length) return { ok: false, problems };
  const edits = editsOf(code, colours);
  const helpers = [colours.sequenced.size ? IN_ORDER_HELPER : "", colours.guarded.size ? `var ${HELD};` : ""].filter(Boolean);
  return { ok: true, code: applyEdits(code, edits) + (helpers.length ? `\n${helpers.join("\n")}\n` : "") };
}

/** What the rewrite cannot make mean the same thing, each with the bundle's line. */
function problemsOf(code: string, { refusedFunctions, refusedInitCalls }: Colours): string[] {
  // Lines are the bundle's; the line's own text says where in the script it is.
  const lines = code.split("\n");
  const where = (node: AnyNode) => {
    const text = unmarkText(lines[node.loc!.start.line - 1]!.trim());
    return `line ${node.loc!.start.line} (\`${text.length > 80 ? `${text.slice(0, 77)}...` : text}\`)`;
  };
  const problems = refusedInitCalls.map(
    (call) =>
      `${where(call.node)}: ${unmarked(call.calleeText)}() in the init context: k6 allows requests and sleep only in VU code (default, setup, teardown, scenario functions)`,
  );
  for (const [fn, reason] of refusedFunctions) {
    if (reason.startsWith("a callback passed to ")) {
      problems.push(
        `${where(fn.node)}: ${reason.replace("a callback", "a callback that makes requests or sleeps,")}: edgeload runs such callbacks in group(), forEach() and map(), or write a for…of loop`,
      );
    } else {
      problems.push(
        `${where(fn.node)}: ${reason} that makes requests or sleeps is not supported: it cannot wait for them in a Worker; make them in a function of its own`,
      );
    }
  }
  return problems;
}

/** The rewrite as edits of the bundle's text. */
function editsOf(code: string, { asyncFunctions, awaited, sequenced, guarded }: Colours): Edit[] {
  const edits: Edit[] = [];
  for (const fn of asyncFunctions) edits.push(asyncWord(code, fn));
  for (const call of awaited) {
    const span = call.end - call.start;
    if (sequenced.has(call)) edits.push(...inOrderEdits(call));
    else edits.push({ at: call.start, end: call.start, text: "(await ", span });
    edits.push({ at: call.end, end: call.end, text: ")", span: -span });
  }
  for (const [call, reason] of guarded) {
    const span = call.end - call.start;
    edits.push({ at: call.start, end: call.start, text: `(${HELD} = `, span });
    edits.push({ at: call.end, end: call.end, text: guardText(calleeOf(call), reason), span: -span });
  }
  return edits;
}

/** `async ` where it goes: before a method's key (`async m() {}`, `static async [k]() {}`), else before the function. */
function asyncWord(code: string, fn: FunctionInfo): Edit {
  let at = fn.node.start;
  if (fn.methodKey) {
    at = fn.methodKey.start;
    const before = code.slice(0, at).trimEnd();
    if (before.endsWith("[")) at = before.length - 1;
  }
  return { at, end: at, text: "async ", span: 0 };
}

/** `list.forEach(fn)` → `(await __k6inOrder(list, "forEach", fn))`; the closing `)` is the caller's. */
function inOrderEdits(call: AnyNode): Edit[] {
  const callee = unwrapCallee(call.callee);
  const span = call.end - call.start;
  const optional = callee.optional || call.optional ? "?" : "";
  const method = JSON.stringify(`${optional}${callee.property.name}`);
  const first = call.arguments[0];
  return [
    { at: call.start, end: call.start, text: `(await ${IN_ORDER}(`, span },
    { at: callee.object.end, end: first.start, text: `, ${method}, `, span: AFTER_CLOSINGS },
  ];
}

/**
 * The end of a checked call: `(__k6held = f(), __k6held instanceof Promise ? <throw> : __k6held)`.
 * The throw is an arrow's on the call's own line, so the error's first frame is the script's line.
 */
function guardText(callee: string | null, reason: string): string {
  const what = callee ? `${callee}()` : "a call";
  const message = `${what} gave a promise in ${reason}, which cannot wait for it: it made a request or slept by a path edgeload's rewrite could not follow; make that call in the VU function itself`;
  return `, ${HELD} instanceof Promise ? (() => { throw new Error(${JSON.stringify(message)}); })() : ${HELD})`;
}

function calleeOf(call: AnyNode): string | null {
  const callee = unwrapCallee(call.type === "TaggedTemplateExpression" ? call.tag : call.callee);
  if (callee.type === "Identifier") return unmarked(callee.name);
  if (callee.type === "MemberExpression" && !callee.computed) return callee.property.name;
  return null;
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
const unmarkText = (text: string) => text.replace(/__k6async_[a-z0-9]+_/g, "").replace(/__k6asyncns_([a-z0-9]+)/g, "$1");
