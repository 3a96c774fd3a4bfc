/**
 * The values the async rewrite's flow analysis (async-transform-flow.ts) follows through a
 * bundle: not numbers or strings, only what can end up being called — the script's
 * functions and classes, the objects that hold them, k6's modules and their functions —
 * and UNKNOWN, a value made by code the analysis does not see (a response, an array's
 * element handed to a callback, whatever a builtin returns).
 *
 * An object is abstracted by where it is made (an object literal, `new C` of one class), a
 * function by its node: the textbook allocation-site abstraction, flow-insensitive, as in
 * Andersen's points-to analysis. What reaches code the analysis does not see "escapes":
 * that code may keep it and hand it back anywhere an UNKNOWN value appears.
 */
import type { Binding } from "./async-transform-scope.ts";
import type { AnyNode, FunctionInfo } from "./async-transform-walk.ts";

export type Token = FnToken | ObjToken | NsToken | RootToken | HostToken | UnknownToken | PrimitiveToken;
export type Values = Set<Token>;

/**
 * Fields by name; "*" holds what was stored under a key computed at run time, "[]" array
 * elements at an index not known (`push`, after a spread), and an index known when written
 * (`[a, b]`, `xs[1] = c`) has a field of its own, "1".
 */
export type Fields = Map<string, Values>;

export const ANY_KEY = "*";
export const ELEMENTS = "[]";
/** How a well-known symbol is named as a key: `@@iterator`. */
export const SYMBOL_KEY = "@@";

/** A script function or class. A function is an object too: `f.x = …`, `F.prototype.m = …`. */
export class FnToken {
  readonly kind = "fn";
  readonly fields: Fields = new Map();
  readonly proto: Values = new Set();
  /** What calls return (for an async function, what its promise resolves to). */
  readonly returns: Values = new Set();
  readonly thisValues: Values = new Set();
  /** A class's `extends` value. */
  readonly superValues: Values = new Set();
  #prototype: ObjToken | null = null;
  #instance: ObjToken | null = null;
  #rest = new Map<number, ObjToken>();
  readonly args = new ObjToken(null, "arguments");
  readonly node: AnyNode;
  /** The function's syntax; for a class, null (its constructor is `ctor`). */
  readonly info: FunctionInfo | null;
  readonly ctor: AnyNode | null;
  /** The copy of a small function this one is part of (see Clone), or null. */
  readonly clone: Clone | null;

  constructor(node: AnyNode, info: FunctionInfo | null, ctor: AnyNode | null, clone: Clone | null) {
    this.node = node;
    this.info = info;
    this.ctor = ctor;
    this.clone = clone;
  }

  get isClass(): boolean {
    return this.info === null;
  }

  /** `F.prototype`, where methods live. */
  prototypeObject(): ObjToken {
    this.#prototype ??= new ObjToken(this.node, "prototype");
    return this.#prototype;
  }

  /** The one abstract instance `new F(…)` makes. */
  instance(): ObjToken {
    if (!this.#instance) {
      this.#instance = new ObjToken(this.node, "instance");
      this.#instance.proto.add(this.prototypeObject());
    }
    return this.#instance;
  }

  /** The array a rest parameter at `index` holds. */
  restArray(index: number): ObjToken {
    let rest = this.#rest.get(index);
    if (!rest) this.#rest.set(index, (rest = new ObjToken(this.node, "rest")));
    return rest;
  }

  /** Objects this function owns beside its fields (they escape with it). */
  owned(): ObjToken[] {
    return [this.#prototype, this.#instance, this.args, ...this.#rest.values()].filter((o): o is ObjToken => o !== null);
  }
}

/**
 * One call's own copy of a small function (`root`, called at `call`): its parameters, its
 * variables, the functions and objects it makes. A helper that many calls share (a
 * bundle's `__commonJS`, a jslib's minified copy of it) would otherwise mix what every
 * caller gives it.
 */
export interface Clone {
  readonly root: AnyNode;
  readonly call: AnyNode;
  /**
   * The root's parameters that surely hold one key in this copy: never assigned, and given
   * an argument written as a literal (`require(10)`); a parameter's key is null once two
   * calls of the copy disagree, and the map null until the copy is first called
   * (async-transform-keys.ts).
   */
  keys: Map<Binding, string | null> | null;
}

/** An object or array made by the script at one place. */
export class ObjToken {
  readonly kind = "obj";
  readonly fields: Fields = new Map();
  readonly proto: Values = new Set();
  readonly site: AnyNode | null;
  readonly label: string;
  constructor(site: AnyNode | null, label: string) {
    this.site = site;
    this.label = label;
  }
}

/** A k6 module's object (`import http from "k6/http"`), by its marked name (`__k6asyncns_http`). */
export interface NsToken {
  readonly kind: "ns";
  readonly name: string;
}

/** One of k6's blocking functions: `http.get`, `sleep`, `group`. */
export interface RootToken {
  readonly kind: "root";
  readonly name: string;
}

/**
 * A function or object of the platform, by name: a builtin (`Object.defineProperty` is
 * `defineProperty`, `console.log` is `log`) or, with `k6`, one of k6's functions that does
 * not block (`check`). The script never defines these.
 */
export interface HostToken {
  readonly kind: "host";
  readonly name: string;
  readonly k6: boolean;
}

export interface UnknownToken {
  readonly kind: "unknown";
}

export const UNKNOWN: UnknownToken = { kind: "unknown" };

/** The host token of Object.prototype: it has only Object.prototype's methods. */
export const OBJECT_PROTOTYPE = "Object.prototype";

/** A string, a number, a boolean: nothing to call, but methods to call on (`s.replace(re, fn)`). */
export interface PrimitiveToken {
  readonly kind: "primitive";
}

export const PRIMITIVE: PrimitiveToken = { kind: "primitive" };
export const EMPTY: ReadonlySet<Token> = new Set();

const interned = new Map<string, NsToken | RootToken | HostToken>();

function intern<T extends NsToken | RootToken | HostToken>(key: string, make: () => T): T {
  let token = interned.get(key);
  if (!token) interned.set(key, (token = make()));
  return token as T;
}

export const nsToken = (name: string): NsToken => intern(`ns:${name}`, () => ({ kind: "ns", name }));
export const rootToken = (name: string): RootToken => intern(`root:${name}`, () => ({ kind: "root", name }));
export const hostToken = (name: string, k6 = false): HostToken => intern(`host:${k6}:${name}`, () => ({ kind: "host", name, k6 }));

/** Adds `source` to `target`; whether anything was new. */
export function addAll(target: Values, source: Iterable<Token>): boolean {
  const before = target.size;
  for (const t of source) target.add(t);
  return target.size !== before;
}

/** A field's values, made empty on first use. */
export function fieldOf(fields: Fields, name: string): Values {
  let values = fields.get(name);
  if (!values) fields.set(name, (values = new Set()));
  return values;
}

/** The field a store under `name` goes to (null: a key computed at run time). */
export const fieldName = (name: string | null): string => name ?? ANY_KEY;

const isIndex = (name: string) => /^\d+$/.test(name);

/**
 * What reading `name` may give of an object's own fields: its field, and what was stored
 * under a key not known ("*"); for an index, also the elements at an index not known ("[]");
 * for ELEMENTS (any element, as iterating gives), every index's field; for null (a key
 * known only at run time), every field. Reading one index of a module table then gives
 * that module only, and an index not known still gives them all.
 */
export function readFields(fields: Fields, name: string | null, out: Values): void {
  if (name === null) {
    for (const values of fields.values()) addAll(out, values);
    return;
  }
  if (name === ELEMENTS) {
    for (const [key, values] of fields) if (key === ELEMENTS || key === ANY_KEY || isIndex(key)) addAll(out, values);
    return;
  }
  addAll(out, fields.get(name) ?? EMPTY);
  addAll(out, fields.get(ANY_KEY) ?? EMPTY);
  if (isIndex(name)) addAll(out, fields.get(ELEMENTS) ?? EMPTY);
}

export const isHeap = (t: Token): t is FnToken | ObjToken => t.kind === "fn" || t.kind === "obj";
