/**
 * The colouring of the async rewrite (async-transform.ts, whose header gives the rules):
 * from the compat layer's blocking functions, which calls block, which functions therefore
 * become async, and which parameters receive a blocking callback, spread until nothing
 * changes. Its own module because it is the rewrite's reasoning: what it finds is reported
 * or rewritten by async-transform.ts, over the syntax async-transform-walk.ts gathered.
 */
import { type AnyNode, type BundleSyntax, type CallInfo, type FunctionInfo, unwrapCallee } from "./async-transform-walk.ts";

export interface AsyncRoots {
  /** Named imports that block: `__k6async_http_get` and the like. */
  readonly isAsyncName: (name: string) => boolean;
  /** Members of a module object that block: (`__k6asyncns_http`, `get`). */
  readonly isAsyncMember: (object: string, property: string) => boolean;
}

/** What the colouring found. */
export interface Colours {
  /** The functions that become `async`. */
  readonly asyncFunctions: ReadonlySet<FunctionInfo>;
  /** The calls that are awaited. */
  readonly awaited: ReadonlySet<AnyNode>;
  /** The awaited `list.forEach(fn)`/`list.map(fn)` calls, run through the sequence helper. */
  readonly sequenced: ReadonlySet<AnyNode>;
}

const SEQUENCED = new Set(["forEach", "map"]);
/** `f.call(this, …)` and `f.apply(this, args)` call f. */
const INDIRECT_CALLS = new Set(["call", "apply"]);
/** How many names deep an alias or export chain is followed. */
const MAX_NAME_HOPS = 16;

export function colourBlockingCalls(syntax: BundleSyntax, roots: AsyncRoots): Colours {
  const colouring = new Colouring(syntax, roots);
  for (let changed = true; changed; ) {
    changed = false;
    for (const call of syntax.calls) {
      if (colouring.handOnCallbacks(call)) changed = true;
      if (colouring.colourCall(call)) changed = true;
    }
    if (colouring.colourGetters()) changed = true;
  }
  return colouring;
}

class Colouring implements Colours {
  readonly asyncFunctions = new Set<FunctionInfo>();
  readonly awaited = new Set<AnyNode>();
  readonly sequenced = new Set<AnyNode>();
  readonly #asyncNames = new Set<string>();
  readonly #asyncMethods = new Set<string>();
  /** Parameters that receive a blocking callback: calling one blocks, in its function. */
  readonly #asyncParams = new Map<FunctionInfo, Set<string>>();
  readonly #syntax: BundleSyntax;
  readonly #roots: AsyncRoots;
  readonly #byNode: Map<AnyNode, FunctionInfo>;
  readonly #byName = new Map<string, FunctionInfo[]>();
  readonly #byMethod = new Map<string, FunctionInfo[]>();

  constructor(syntax: BundleSyntax, roots: AsyncRoots) {
    this.#syntax = syntax;
    this.#roots = roots;
    this.#byNode = new Map(syntax.functions.map((f) => [f.node, f]));
    for (const f of syntax.functions) {
      if (f.name === null) continue;
      const book = f.method ? this.#byMethod : this.#byName;
      book.set(f.name, [...(book.get(f.name) ?? []), f]);
    }
  }

  /**
   * A blocking callback passed to one of the script's functions makes that parameter
   * blocking inside it: the function awaits it, and so becomes async itself.
   */
  handOnCallbacks(call: CallInfo): boolean {
    let changed = false;
    call.node.arguments.forEach((argument: AnyNode, i: number) => {
      if (!this.#isAsyncArgument(argument, call.within)) return;
      for (const target of this.#calledFunctions(call.node)) {
        const param = target.params[i];
        if (param === null || param === undefined) continue;
        const held = this.#asyncParams.get(target) ?? new Set<string>();
        if (held.has(param)) continue;
        this.#asyncParams.set(target, held.add(param));
        changed = true;
      }
    });
    return changed;
  }

  /** A call that blocks is awaited, and the function it is in becomes async. */
  colourCall(call: CallInfo): boolean {
    if (this.awaited.has(call.node) || !this.#blocks(call.node, call.within)) return false;
    this.awaited.add(call.node);
    const callee = call.node.callee;
    if (
      callee.type === "MemberExpression" &&
      SEQUENCED.has(callee.property?.name) &&
      !this.#aliasOf(callee.object?.name ?? "", (o) => this.#roots.isAsyncMember(o, callee.property.name)) &&
      !this.#asyncMethods.has(callee.property.name)
    ) {
      this.sequenced.add(call.node);
    }
    const within = call.within;
    if (within && !this.asyncFunctions.has(within)) {
      this.asyncFunctions.add(within);
      if (within.name) (within.method ? this.#asyncMethods : this.#asyncNames).add(within.name);
    }
    return true;
  }

  /**
   * An export's getter `key: () => f` of an async f: `module.key()` blocks. Not `default`:
   * every module's default export would make every `x.default()` awaited.
   */
  colourGetters(): boolean {
    let changed = false;
    for (const [key, locals] of this.#syntax.getters) {
      if (key !== "default" && !this.#asyncMethods.has(key) && [...locals].some((l) => this.#asyncNames.has(l))) {
        this.#asyncMethods.add(key);
        changed = true;
      }
    }
    return changed;
  }

  #blocks(call: AnyNode, within: FunctionInfo | null): boolean {
    const callee = unwrapCallee(call.callee);
    if (callee.type === "Identifier") return this.#nameBlocks(callee.name) || this.#isAsyncParam(callee.name, within);
    if (callee.type === "MemberExpression" && !callee.computed && callee.property.type === "Identifier") {
      const property = callee.property.name as string;
      const object = callee.object.type === "Identifier" ? (callee.object.name as string) : null;
      if (object !== null && this.#aliasOf(object, (o) => this.#roots.isAsyncMember(o, property))) return true;
      if (this.#asyncMethods.has(property)) return true;
      // A module's export read through its CommonJS view: `(0, k6.group)(…)`.
      const local = object === null ? null : this.#exportedLocal(object, property);
      if (local !== null && this.#nameBlocks(local)) return true;
      // fn.call(this, …) where fn is a blocking callback.
      if (object !== null && INDIRECT_CALLS.has(property) && (this.#asyncNames.has(object) || this.#isAsyncParam(object, within))) return true;
      // list.forEach(async callback): sequenced, so it blocks.
      if (SEQUENCED.has(property)) return call.arguments.some((a: AnyNode) => this.#isAsyncArgument(a, within));
    }
    return false;
  }

  #nameBlocks(name: string): boolean {
    return this.#aliasOf(name, this.#roots.isAsyncName) || this.#asyncNames.has(name);
  }

  /** Whether `name`, seen from `within`, is a parameter given a blocking callback (an inner parameter of the same name hides it). */
  #isAsyncParam(name: string, within: FunctionInfo | null): boolean {
    for (let f = within; f; f = f.parent) {
      if (this.#asyncParams.get(f)?.has(name)) return true;
      if (f.params.includes(name)) return false;
    }
    return false;
  }

  /** A function that blocks, passed as an argument: inline, by its name, or a parameter that holds one. */
  #isAsyncArgument(node: AnyNode, within: FunctionInfo | null): boolean {
    const info = this.#byNode.get(node);
    if (info !== undefined) return this.asyncFunctions.has(info);
    return node.type === "Identifier" && (this.#asyncNames.has(node.name) || this.#isAsyncParam(node.name, within));
  }

  /** The script's own functions a call may reach (by name; a method by its property name, or an export's getter). */
  #calledFunctions(call: AnyNode): FunctionInfo[] {
    const callee = unwrapCallee(call.callee);
    if (callee.type === "Identifier") return this.#byName.get(callee.name) ?? [];
    if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier") return [];
    const property = callee.property.name as string;
    const locals = new Set(this.#syntax.getters.get(property));
    const exported = callee.object.type === "Identifier" ? this.#exportedLocal(callee.object.name, property) : null;
    if (exported !== null) locals.add(exported);
    return [...(this.#byMethod.get(property) ?? []), ...[...locals].flatMap((l) => this.#byName.get(l) ?? [])];
  }

  /** Whether `name` or a name it aliases passes `test`: `var http_default = __k6asyncns_http` (esbuild's names for an import). */
  #aliasOf(name: string, test: (n: string) => boolean): boolean {
    for (let seen = 0; seen < MAX_NAME_HOPS; seen++) {
      if (test(name)) return true;
      const next = this.#syntax.aliases.get(name);
      if (next === undefined) return false;
      name = next;
    }
    return false;
  }

  /** The local name `object.property` reads through a module's export object, if any. */
  #exportedLocal(object: string, property: string): string | null {
    for (let seen = 0; seen < MAX_NAME_HOPS; seen++) {
      const local = this.#syntax.exportObjects.get(object)?.get(property);
      if (local !== undefined) return local;
      const next = this.#syntax.aliases.get(object);
      if (next === undefined) return null;
      object = next;
    }
    return null;
  }
}
