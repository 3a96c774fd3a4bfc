/**
 * The colouring of the async rewrite (async-transform.ts gives the rules): from what each
 * call may call (async-transform-flow.ts), which functions may block, which cannot be made
 * async and must stay as they are, and so which calls are awaited, which are run in order
 * by the rewrite, which are checked at run time, and which make the script refused.
 *
 * Two colours, each spread to callers until nothing changes:
 *  - may block: a call may reach k6's blocking functions by a path the analysis found, or
 *    through a value from code it does not see when something blocking escaped there;
 *  - surely blocks: by a path it found (the first colour without the doubt).
 * A function that may block becomes async — unless it cannot be (the init context, a
 * getter, a setter, a constructor, a class's field initialisers, a generator, a callback of
 * code that uses its result at once, and what these call): then it is pinned. A pinned
 * function that surely blocks is refused, naming it; one that only may block keeps its
 * doubtful calls, each checked at run time to throw with its line if it did give a promise.
 */
import type { FlowResult } from "./async-transform-flow.ts";
import type { CallFacts } from "./async-transform-types.ts";
import type { FnToken, Token } from "./async-transform-values.ts";
import type { AnyNode, BundleSyntax, FunctionInfo } from "./async-transform-walk.ts";
import { asyncNamespace, MODULES, type ModuleName } from "./modules.ts";

/** The program's top level: it runs in the init context, as the outermost function does. */
export const TOP_LEVEL = null;
type Context = FunctionInfo | typeof TOP_LEVEL;

export interface Colours {
  /** Functions that become `async`. */
  readonly asyncFunctions: ReadonlySet<FunctionInfo>;
  /** Calls awaited. */
  readonly awaited: ReadonlySet<AnyNode>;
  /** Awaited `list.forEach(fn)` / `list.map(fn)`, run in order by the rewrite's helper. */
  readonly sequenced: ReadonlySet<AnyNode>;
  /** Calls in pinned functions that may give a promise, with why their function is pinned. */
  readonly guarded: ReadonlyMap<AnyNode, string>;
  /** Pinned functions that surely block, with why they are pinned; and the init context's blocking calls. */
  readonly refusedFunctions: ReadonlyMap<FunctionInfo, string>;
  readonly refusedInitCalls: readonly CallFacts[];
}

const PROTOCOL_METHODS = new Set(["toJSON", "toString", "valueOf"]);
/** The marked names of k6's modules with a blocking export: one of those escaping may be called back. */
const BLOCKING_MODULES = new Set(
  (Object.keys(MODULES) as ModuleName[]).filter((m) => (MODULES[m].blocking as readonly string[]).length > 0).map(asyncNamespace),
);

export function colourBlockingCalls(syntax: BundleSyntax, { heap, facts }: FlowResult): Colours {
  const callsIn = new Map<Context, CallFacts[]>();
  const awaitedAsWritten = new Set<AnyNode>();
  for (const call of syntax.calls) {
    const f = facts.get(call.node);
    if (f) callsIn.set(call.within, [...(callsIn.get(call.within) ?? []), f]);
    if (call.awaitedAsWritten) awaitedAsWritten.add(call.node);
  }
  const isAsyncWritten = (fn: FnToken) => fn.info?.isAsync === true;
  const callees = (c: CallFacts) => (c.isNew ? [] : [...c.functions].filter((f) => f.info && !isAsyncWritten(f)));
  const escapedCallables = [...heap.escaped];
  const blockerIn = (tokens: Iterable<Token>, colour: ReadonlySet<FunctionInfo>) => {
    for (const t of tokens)
      if (t.kind === "root" || (t.kind === "ns" && BLOCKING_MODULES.has(t.name)) || (t.kind === "fn" && t.info && !t.info.isAsync && colour.has(t.info)))
        return true;
    return false;
  };
  /** Whether a call may reach something of `colour` through a value from unseen code. */
  const doubtful = (c: CallFacts, colour: ReadonlySet<FunctionInfo>) =>
    c.unknown === "call" ? blockerIn(escapedCallables, colour) : c.unknown === "member" ? escapedMembersBlock(c.unknownMembers, colour) : false;
  const escapedMembersBlock = (names: ReadonlySet<string> | null, colour: ReadonlySet<FunctionInfo>) =>
    names === null ? blockerIn(heap.escapedField(null), colour) : [...names].some((name) => blockerIn(heap.escapedField(name), colour));
  const inOrder = (c: CallFacts, colour: ReadonlySet<FunctionInfo>) =>
    c.sequenceMethod !== null && c.callbacks.some((cb) => cb.host === "sequence" && !isAsyncWritten(cb.fn) && colour.has(cb.fn.info!));

  const spread = (blocks: (c: CallFacts, colour: Set<FunctionInfo>) => boolean): Set<FunctionInfo> => {
    const colour = new Set<FunctionInfo>();
    for (let changed = true; changed; ) {
      changed = false;
      for (const [within, calls] of callsIn) {
        // The init context is run by the factory, never awaited: it does not colour its caller.
        if (within === TOP_LEVEL || within.kind === "init" || colour.has(within)) continue;
        if (calls.some((c) => blocks(c, colour))) {
          colour.add(within);
          changed = true;
        }
      }
    }
    return colour;
  };
  const surely = (c: CallFacts, colour: ReadonlySet<FunctionInfo>) => c.roots.size > 0 || callees(c).some((f) => colour.has(f.info!)) || inOrder(c, colour);
  const mayBlock = spread((c, colour) => surely(c, colour) || doubtful(c, colour));
  const surelyBlocks = spread(surely);

  const pinned = pin(syntax, callsIn, mayBlock, callees);
  const asyncFunctions = new Set([...mayBlock].filter((f) => !pinned.has(f) && !f.isAsync));
  const runsAsync = (w: Context) => w !== TOP_LEVEL && (asyncFunctions.has(w) || w.isAsync);
  const sequenced = new Set<AnyNode>();
  const awaited = new Set<AnyNode>();
  const guarded = new Map<AnyNode, string>();
  const refusedInitCalls: CallFacts[] = [];
  for (const [within, calls] of callsIn) {
    for (const c of calls) {
      const ordered = runsAsync(within) && inOrder(c, asyncFunctions);
      if (ordered) sequenced.add(c.node);
      const definite = c.roots.size > 0 || callees(c).some((f) => surelyBlocks.has(f.info!));
      const blocks = ordered || definite || callees(c).some((f) => asyncFunctions.has(f.info!)) || doubtful(c, asyncFunctions);
      // Awaited as written: a second await would only cost (forEach/map still go through the helper).
      if (runsAsync(within) && blocks && (ordered || !awaitedAsWritten.has(c.node))) awaited.add(c.node);
      else if (!runsAsync(within) && isPinned(pinned, within)) {
        if (definite && (within === TOP_LEVEL || within.kind === "init")) refusedInitCalls.push(c);
        else if (!definite && doubtful(c, asyncFunctions)) guarded.set(c.node, pinReason(pinned, within));
      }
    }
  }
  const refusedFunctions = new Map<FunctionInfo, string>();
  for (const [f, reason] of pinned.roots) if (surelyBlocks.has(f) && f.kind !== "init") refusedFunctions.set(f, reason);
  return { asyncFunctions, awaited, sequenced, guarded, refusedFunctions, refusedInitCalls };
}

interface Pinned {
  /** Pinned for what they are, with why. */
  readonly roots: Map<FunctionInfo, string>;
  /** Pinned because a pinned function calls them: the root they were reached from. */
  readonly reached: Map<FunctionInfo, FunctionInfo | typeof TOP_LEVEL>;
  has(f: FunctionInfo): boolean;
}

const isPinned = (pinned: Pinned, w: Context) => w === TOP_LEVEL || pinned.has(w);

function pinReason(pinned: Pinned, w: Context): string {
  let at: Context = w;
  for (let hops = 0; at !== TOP_LEVEL && !pinned.roots.has(at) && hops < 1000; hops++) at = pinned.reached.get(at) ?? TOP_LEVEL;
  return at === TOP_LEVEL ? "the init context" : pinned.roots.get(at)!;
}

/** Which functions cannot be made async: those that cannot be, and what they call that may block. */
function pin(syntax: BundleSyntax, callsIn: Map<Context, CallFacts[]>, mayBlock: ReadonlySet<FunctionInfo>, callees: (c: CallFacts) => FnToken[]): Pinned {
  const roots = new Map<FunctionInfo, string>();
  const reached = new Map<FunctionInfo, Context>();
  const has = (f: FunctionInfo) => roots.has(f) || reached.has(f);
  const work: Context[] = [TOP_LEVEL];
  const pinRoot = (f: FunctionInfo, reason: string) => {
    if (has(f) || f.isAsync) return;
    roots.set(f, reason);
    work.push(f);
  };
  for (const f of syntax.functions) {
    const reason = fixedReason(f);
    if (reason && (mayBlock.has(f) || f.kind === "init")) pinRoot(f, reason);
  }
  for (const [within, calls] of callsIn) {
    for (const c of calls) {
      // An async function has no prototype and cannot be `new`ed: a function constructor stays as it is.
      if (c.isNew) for (const fn of c.functions) if (fn.info && mayBlock.has(fn.info)) pinRoot(fn.info, "a function called with new");
      for (const cb of c.callbacks) {
        if (cb.host === "sync" && cb.fn.info && mayBlock.has(cb.fn.info)) pinRoot(cb.fn.info, `a callback passed to ${c.calleeText}()`);
      }
      void within;
    }
  }
  while (work.length) {
    const w = work.pop()!;
    for (const c of callsIn.get(w) ?? []) {
      const reach = [...callees(c).map((f) => f.info!), ...c.callbacks.filter((cb) => cb.host === "sequence").map((cb) => cb.fn.info!)];
      for (const f of reach) {
        if (!f || !mayBlock.has(f) || has(f) || f.isAsync) continue;
        reached.set(f, w);
        work.push(f);
      }
    }
  }
  return { roots, reached, has };
}

/** Why a function cannot be async whatever it calls, or null. */
function fixedReason(f: FunctionInfo): string | null {
  switch (f.kind) {
    case "init":
      return "the init context";
    case "get":
    case "set":
      return `a ${f.kind}ter`;
    case "constructor":
      return "a constructor";
    case "fields":
      return "a class's field initialisers";
  }
  if (f.isGenerator && !f.isAsync) return "a generator function";
  if (f.name && PROTOCOL_METHODS.has(f.name) && (f.kind === "method" || f.kind === "function")) return `${f.name}(), which the platform calls`;
  return null;
}
