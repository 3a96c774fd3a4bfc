/**
 * What the parts of the async rewrite's flow analysis tell one another: the facts it
 * records about each call (read by the colouring, async-transform-colour.ts), and the
 * evaluator's surface that calls, builtins and literals are evaluated through
 * (async-transform-flow.ts implements it). Its own module so that the parts depend on it,
 * not on each other in a circle.
 */
import type { Args } from "./async-transform-args.ts";
import type { Heap } from "./async-transform-heap.ts";
import type { Names } from "./async-transform-scope.ts";
import type { FnToken, Values } from "./async-transform-values.ts";
import type { AnyNode } from "./async-transform-walk.ts";

/**
 * How code the analysis does not see runs a function given to it: `awaits` what it returns
 * (`group`, a promise's `then`), runs it once per element (`forEach`, `map`: the rewrite may
 * run those in order itself), or runs it and uses what it returns at once (`sync`: `check`,
 * `filter`, `sort`, a timer).
 */
export type HostKind = "awaits" | "sequence" | "sync";

export interface CallFacts {
  readonly node: AnyNode;
  /** The script's functions it may run (for `new`, the constructors). */
  readonly functions: Set<FnToken>;
  /** k6's blocking functions it may call, by name. */
  readonly roots: Set<string>;
  /**
   * Its callee may be a value from code the analysis does not see: `call`, any escaped
   * function; `member`, any escaped object's method of a name called (`unknownMembers`:
   * each name its copies and a conditional key may call; null when one is known only at run time).
   */
  unknown: "none" | "call" | "member";
  unknownMembers: Set<string> | null;
  readonly isNew: boolean;
  /** Functions it hands to code that runs them, and how that code runs them. */
  readonly callbacks: { readonly fn: FnToken; readonly host: HostKind }[];
  /** `list.forEach(fn)`, `list.map(fn)` or `selection.each(fn)` of a builtin (an array, a Map, a Selection…). */
  sequenceMethod: "forEach" | "map" | "each" | null;
  /** How a message names the callee: `xs.filter()`, `setTimeout()`. */
  readonly calleeText: string;
}

/** The flow analysis's evaluator, as calls, builtins and literals use it. */
export interface Evaluator {
  readonly heap: Heap;
  readonly names: Names;
  /** What each call may call, this pass. */
  readonly facts: Map<AnyNode, CallFacts>;
  /** The `this` of the code being evaluated. */
  thisValues: Values;
  /** The classes being evaluated, innermost last: where `super` looks. */
  readonly classes: FnToken[];
  /** Literals of data inside another literal (async-transform-literals.ts dataLiterals). */
  readonly dataLiterals: ReadonlySet<AnyNode>;
  value(node: AnyNode): Values;
  /** What iterating `values` gives. */
  elements(values: Values): Values;
  callFunction(fn: FnToken, args: Args, receiver: Values | null): void;
  callCopy(fn: FnToken, args: Args, receiver: Values | null, call: AnyNode): Values | null;
  propertyName(member: AnyNode): string | null;
  propertyNames(member: AnyNode): (string | null)[];
  superObjects(): Values;
}
