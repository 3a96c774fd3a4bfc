/**
 * The state of the async rewrite's flow analysis and its three operations on objects:
 * read a property, store one, and let a value escape to code the analysis does not see.
 * The evaluator (async-transform-flow.ts) and the calls (async-transform-calls.ts) change
 * the state only through these, so that the analysis knows when it has stopped changing.
 *
 * Escaped values are what UNKNOWN may be: calling `x.m()` of an UNKNOWN `x` may call any
 * escaped object's `m`, calling an UNKNOWN value any escaped function (the colouring asks,
 * async-transform-colour.ts).
 */
import type { Binding, Names } from "./async-transform-scope.ts";
import {
  addAll,
  type Clone,
  EMPTY,
  FnToken,
  fieldName,
  fieldOf,
  hostToken,
  isHeap,
  nsToken,
  OBJECT_PROTOTYPE,
  ObjToken,
  readFields,
  rootToken,
  SYMBOL_KEY,
  type Token,
  UNKNOWN,
  type Values,
} from "./async-transform-values.ts";
import type { AnyNode, BundleSyntax } from "./async-transform-walk.ts";
import { asyncNamespace, isSupportedModule } from "./modules.ts";

/** The most values a set holds before it is widened to UNKNOWN (see Heap.add). */
const WIDEST = 48;
/** How deep a prototype chain is followed (a chain made into a loop ends here). */
const MAX_PROTO_DEPTH = 8;
/**
 * The global names a script's isolate may define: JavaScript's own (those of the isolate this
 * runs in, a superset) and what the VU factory defines (bundle.ts wrapFactory).
 */
const PLATFORM_GLOBALS = new Set([
  ...Object.getOwnPropertyNames(globalThis),
  ...["self", "__k6modules", "__ENV", "__VU", "__ITER", "__k6open", "__k6seq", "console", "setTimeout", "clearTimeout", "setInterval", "clearInterval"],
]);
/** Objects made as arrays: they have Array.prototype's methods. */
const ARRAYS = new Set(["array", "rest", "arguments"]);
/** The names a script reaches its global object by: a store on one is a global variable. */
const GLOBAL_OBJECTS = new Set(["globalThis", "self", "global", "window"]);

/** The compat layer's blocking functions, as the bundle marks them (modules.ts). */
export interface AsyncRoots {
  /** Named imports that block: `__k6async_http_get` and the like. */
  readonly isAsyncName: (name: string) => boolean;
  /** Members of a module object that block: (`__k6asyncns_http`, `get`). */
  readonly isAsyncMember: (object: string, property: string) => boolean;
}

export class Heap {
  changed = false;
  readonly escaped: Values = new Set();
  /** Functions that code the analysis does not see calls: with anything, its result kept. */
  readonly hostCalled = new Set<FnToken>();
  /** Of those, the ones whose result that code keeps (not an accessor's, which a field holds: see markHostCalled). */
  readonly #resultKept = new Set<FnToken>();
  readonly #widened = new WeakSet<Values>();
  readonly #bindings = new Map<Binding, Map<Clone | null, Values>>();
  readonly #globals = new Map<string, Values>();
  readonly #fnTokens = new Map<AnyNode, Map<Clone | null, FnToken>>();
  readonly #objects = new Map<AnyNode, Map<string, Map<Clone | null, ObjToken>>>();
  #escapedFields: Map<string | null, Values> = new Map();

  readonly syntax: BundleSyntax;
  readonly names: Names;
  readonly roots: AsyncRoots;
  constructor(syntax: BundleSyntax, names: Names, roots: AsyncRoots) {
    this.syntax = syntax;
    this.names = names;
    this.roots = roots;
  }

  /**
   * Adds `source` to `target`. A set that grows past WIDEST is widened to UNKNOWN, what it
   * held escaping (so that UNKNOWN still stands for it): a library's helpers through which
   * everything flows (cheerio's, chai's) would otherwise make every set hold everything and
   * the analysis slow, for no call of the script's.
   */
  add(target: Values, source: Iterable<Token>): void {
    if (this.#widened.has(target)) {
      for (const t of source) if (t !== UNKNOWN) this.escape([t]);
      return;
    }
    if (!addAll(target, source)) return;
    this.changed = true;
    if (target.size <= WIDEST) return;
    this.escape(target);
    target.clear();
    target.add(UNKNOWN);
    this.#widened.add(target);
  }

  /** The token of a function or class node. */
  /** The copy being evaluated (see Clone), or null. */
  clone: Clone | null = null;
  readonly #clones = new Map<AnyNode, Map<AnyNode, Clone>>();

  /** The copy of `root` for the call `call`. */
  cloneOf(root: AnyNode, call: AnyNode): Clone {
    const byCall = inner(this.#clones, root, () => new Map<AnyNode, Clone>());
    return inner(byCall, call, () => ({ root, call, keys: null }));
  }

  /** The copy `node` belongs to: the one being evaluated, when node is inside its function. */
  #copyOf(node: AnyNode): Clone | null {
    const c = this.clone;
    return c && node.start >= c.root.start && node.end <= c.root.end ? c : null;
  }

  /** The token of a function or class node (in the copy being evaluated, if it is inside it). */
  fnToken(node: AnyNode): FnToken {
    const clone = this.#copyOf(node);
    return inner(
      inner(this.#fnTokens, node, () => new Map()),
      clone,
      () => {
        const isClass = node.type === "ClassDeclaration" || node.type === "ClassExpression";
        const ctor = isClass ? (node.body.body.find((m: AnyNode) => m.kind === "constructor")?.value ?? null) : null;
        return new FnToken(node, isClass ? null : this.syntax.functionOf.get(node)!, ctor, clone);
      },
    );
  }

  /** The object made at `site` (a literal, `Object.create(…)`). */
  objectAt(site: AnyNode, label: string): ObjToken {
    const clone = this.#copyOf(site);
    const byLabel = inner(this.#objects, site, () => new Map<string, Map<Clone | null, ObjToken>>());
    return inner(
      inner(byLabel, label, () => new Map()),
      clone,
      () => new ObjToken(site, label),
    );
  }

  bindingValues(binding: Binding): Values {
    return inner(
      inner(this.#bindings, binding, () => new Map()),
      this.#copyOf(binding.declaredIn),
      () => new Set(),
    );
  }

  /** What an identifier holds: its binding's values, or for a global, what the platform and the script put there. */
  readName(id: AnyNode): Values {
    const binding = this.names.refs.get(id);
    if (binding) return this.bindingValues(binding);
    const name = id.name as string;
    if (name === "undefined") return EMPTY as Values;
    if (this.roots.isAsyncName(name)) return new Set([rootToken(unmarked(name))]);
    if (name.startsWith("__k6asyncns_")) return new Set([nsToken(name)]);
    // A name the platform does not define throws if read (UMD's `define`, `module`): nothing to follow.
    return new Set([...this.#global(name), ...(PLATFORM_GLOBALS.has(name) ? [hostToken(name)] : [])]);
  }

  /** Assigns to an identifier: its binding, or a global variable. */
  writeName(id: AnyNode, values: Iterable<Token>): void {
    const binding = this.names.refs.get(id);
    if (!binding) {
      this.add(this.#global(id.name), values);
      return;
    }
    this.#writeBinding(binding, id, values);
    const parameter = this.names.laterValueOf.get(binding);
    if (parameter) this.#writeBinding(parameter, id, values);
  }

  /** A write to `binding` by `id`: it reaches the reads of every self-assignment of it but the one `id` is the target of. */
  #writeBinding(binding: Binding, id: AnyNode, values: Iterable<Token>): void {
    this.add(this.bindingValues(binding), values);
    for (const { before, target } of this.names.selfAssignments.get(binding) ?? []) if (target !== id) this.add(this.bindingValues(before), values);
  }

  #global(name: string): Values {
    let values = this.#globals.get(name);
    if (!values) this.#globals.set(name, (values = new Set()));
    return values;
  }

  /** `objs[name]` (name null: a key computed at run time). */
  read(objs: Iterable<Token>, name: string | null): Values {
    const out: Values = new Set();
    for (const t of objs) {
      if (isHeap(t)) this.#readHeap(t, name, out);
      else if (t.kind === "ns") this.#readModule(t.name, name, out);
      else if (t.kind === "unknown") out.add(UNKNOWN);
      else if (t.kind === "host" && t.name === "__k6modules" && name !== null && isSupportedModule(name)) out.add(nsToken(asyncNamespace(name)));
      else if (t.kind === "host" || t.kind === "primitive") out.add(hostToken(name ?? "[computed]", t.kind === "host" && t.k6));
    }
    return out;
  }

  #readHeap(t: FnToken | ObjToken, name: string | null, out: Values): void {
    if (t.kind === "fn" && name === "prototype") out.add(t.prototypeObject());
    const visit = (o: Token, depth: number) => {
      if (depth > MAX_PROTO_DEPTH) return;
      if (o.kind === "unknown") out.add(UNKNOWN);
      // A class extending a builtin (`Error`, `Map`) has its methods.
      if (o.kind === "host" && name !== null && (o.name !== OBJECT_PROTOTYPE || Reflect.has(Object.prototype, name))) out.add(hostToken(name));
      if (!isHeap(o)) return;
      readFields(o.fields, name, out);
      for (const p of o.proto) visit(p, depth + 1);
    };
    visit(t, 0);
    // Code that holds it may have put anything there.
    if (this.escaped.has(t)) out.add(UNKNOWN);
    // A builtin every such value has (`hasOwnProperty`, an array's `push`, a function's `call`).
    const builtin = name?.startsWith(SYMBOL_KEY) ? Reflect.get(Symbol, name.slice(SYMBOL_KEY.length)) : name;
    if (builtin !== null && Reflect.has(t.kind === "fn" ? Function.prototype : ARRAYS.has(t.label) ? Array.prototype : Object.prototype, builtin))
      out.add(hostToken(name!));
  }

  #readModule(ns: string, name: string | null, out: Values): void {
    if (name === "default") out.add(nsToken(ns));
    else if (name === null) out.add(rootToken(`${unmarked(ns)}[…]`));
    else if (this.roots.isAsyncMember(ns, name)) out.add(rootToken(`${unmarked(ns)}.${name}`));
    else out.add(hostToken(name, true));
  }

  /** `objs[name] = values`. */
  store(objs: Iterable<Token>, name: string | null, values: Iterable<Token>, hostObject?: string): void {
    for (const t of objs) {
      if (isHeap(t)) this.add(fieldOf(t.fields, fieldName(name)), values);
      else if (t.kind === "host" && GLOBAL_OBJECTS.has(t.name) && hostObject === t.name && name !== null) this.add(this.#global(name), values);
      else if (t.kind !== "ns") this.escape(values);
    }
  }

  /**
   * `resultTo: "field"` for a getter or setter `Object.defineProperty` installs: the platform
   * runs it on a read or write of the property, and what a getter returns is already the
   * property's value in the analysis (it escapes with the object). Called any other way (or
   * once it escapes itself), what it returns goes to code not seen.
   */
  markHostCalled(fn: FnToken, resultTo: "host" | "field" = "host"): void {
    if (resultTo === "host" && !this.#resultKept.has(fn)) {
      this.#resultKept.add(fn);
      this.changed = true;
    }
    if (this.hostCalled.has(fn)) return;
    this.hostCalled.add(fn);
    this.changed = true;
  }

  escape(values: Iterable<Token>): void {
    for (const t of values) {
      if (this.escaped.has(t)) continue;
      this.escaped.add(t);
      this.changed = true;
      this.#escapedFields = new Map();
    }
  }

  /** What any escaped object may hold under `name` (null: under any name). */
  escapedField(name: string | null): Values {
    let values = this.#escapedFields.get(name);
    if (values) return values;
    values = new Set();
    for (const t of this.escaped) {
      if (isHeap(t)) readFields(t.fields, name, values);
      else if (t.kind === "ns") this.#readModule(t.name, name, values);
    }
    this.#escapedFields.set(name, values);
    return values;
  }

  /** Everything reachable from an escaped value escapes too; what host code calls gets anything. */
  closeEscapes(): void {
    const work = [...this.escaped];
    const reach = (values: Iterable<Token>) => {
      for (const v of values) {
        if (this.escaped.has(v)) continue;
        this.escape([v]);
        work.push(v);
      }
    };
    while (work.length) {
      const t = work.pop()!;
      if (!isHeap(t)) continue;
      for (const values of t.fields.values()) reach(values);
      reach(t.proto);
      if (t.kind === "fn") {
        this.markHostCalled(t);
        reach(t.owned());
      }
    }
    for (const fn of this.#resultKept) reach(fn.returns);
    this.#escapedFields = new Map();
  }
}

/** `map.get(key)`, made by `make` on first use. */
function inner<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

/** A marked name as the script wrote it: `__k6async_http_get` → `get`, `__k6asyncns_http` → `http`. */
export const unmarked = (name: string) => name.replace(/^__k6async_[a-z0-9]+_/, "").replace(/^__k6asyncns_/, "");
