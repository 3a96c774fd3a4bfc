/**
 * Where the script's functions can flow, so that the async rewrite knows what each call may
 * call (async-transform.ts gives the rules this serves). A whole-program, flow-insensitive
 * points-to analysis over the bundle (its values in async-transform-values.ts): every
 * expression is evaluated to the set of functions and objects it may be, over and over,
 * until no set grows. A function returned in an object (`return { get }`), kept in a
 * variable, an array or a class, handed to a helper as a callback, or read back through
 * `this`, is followed to the calls that run it; what reaches code the analysis does not see
 * (a builtin, a host object) escapes, and a call of a value from there may call it.
 *
 * Calls are evaluated in async-transform-calls.ts, which records what each may call.
 */
import type { Args } from "./async-transform-args.ts";
import { liveBranches } from "./async-transform-branches.ts";
import { evaluateCall } from "./async-transform-calls.ts";
import { type AsyncRoots, Heap } from "./async-transform-heap.ts";
import { copyGetters } from "./async-transform-hosts.ts";
import { arrayLiteral, classValue, dataLiterals, objectLiteral } from "./async-transform-literals.ts";
import { computedKeys, forInCopy, readKeys, recordKeys } from "./async-transform-keys.ts";
import { type Names, resolveNames } from "./async-transform-scope.ts";
import type { CallFacts, Evaluator } from "./async-transform-types.ts";
import { EMPTY, ELEMENTS, type FnToken, fieldOf, PRIMITIVE, UNKNOWN, type Values } from "./async-transform-values.ts";
import { type AnyNode, type BundleSyntax, forEachChild, keyName } from "./async-transform-walk.ts";

/**
 * Functions up to this long (in characters) are evaluated per call (Flow.callCopy): a
 * bundle's helpers and a jslib's minified copies of them are, and a script's own small
 * helpers gain from it too; a large function is evaluated once for all its calls.
 */
const MAX_COPIED_LENGTH = 400;
/** A pass may add to a set only; past this many passes something is wrong with the analysis itself. */
const MAX_PASSES = 500;

export interface FlowResult {
  readonly heap: Heap;
  /** What each call may call, from the last (settled) pass. */
  readonly facts: ReadonlyMap<AnyNode, CallFacts>;
}

export function analyseFlow(program: AnyNode, syntax: BundleSyntax, roots: AsyncRoots): FlowResult {
  const flow = new Flow(new Heap(syntax, resolveNames(program), roots), program);
  flow.run(program);
  return { heap: flow.heap, facts: flow.facts };
}

export class Flow implements Evaluator {
  readonly facts = new Map<AnyNode, CallFacts>();
  /** The function being evaluated (where `return` goes) and its `this`. */
  current: FnToken | null = null;
  thisValues: Values = new Set();
  /** The classes being evaluated, innermost last: where `super` looks. */
  readonly classes: FnToken[] = [];

  readonly heap: Heap;
  /** Getters whose copies are followed at their defineProperty call (async-transform-hosts.ts copyGetters). */
  readonly #copyGetters: ReadonlySet<AnyNode>;
  /** Small functions being evaluated as a copy (see callCopy), and the copies evaluated this pass. */
  readonly #copying = new Set<AnyNode>();
  readonly #copied = new Set<object>();
  /** Literals of data inside another literal (async-transform-literals.ts dataLiterals). */
  readonly dataLiterals: ReadonlySet<AnyNode>;
  constructor(heap: Heap, program: AnyNode) {
    this.heap = heap;
    this.dataLiterals = dataLiterals(program);
    this.#copyGetters = copyGetters(
      heap.syntax.calls.map((c) => c.node),
      heap.names.refs,
    );
  }

  get names(): Names {
    return this.heap.names;
  }

  run(program: AnyNode): void {
    for (let pass = 0; ; pass++) {
      if (pass === MAX_PASSES) throw new Error(`the async rewrite's analysis did not settle in ${MAX_PASSES} passes`);
      this.heap.changed = false;
      this.facts.clear();
      this.#copied.clear();
      this.value(program);
      this.heap.closeEscapes();
      if (!this.heap.changed) return;
    }
  }

  /** Evaluates `node` (a statement evaluates to nothing), recording what it does to the state. */
  value(node: AnyNode): Values {
    const heap = this.heap;
    switch (node.type) {
      case "Identifier":
        return heap.readName(node);
      case "ThisExpression":
        return this.thisValues;
      case "FunctionDeclaration":
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        return this.#function(node);
      case "ClassDeclaration":
      case "ClassExpression":
        return classValue(this, node);
      case "ObjectExpression":
        return objectLiteral(this, node);
      case "ArrayExpression":
        return arrayLiteral(this, node);
      case "MemberExpression":
        return this.#member(node);
      case "ChainExpression":
        return this.value(node.expression);
      case "CallExpression":
      case "NewExpression":
      case "TaggedTemplateExpression":
        return evaluateCall(this, node);
      case "AssignmentExpression":
        return this.#assignment(node);
      case "SequenceExpression": {
        let last: Values = EMPTY as Values;
        for (const e of node.expressions) last = this.value(e);
        return last;
      }
      case "ConditionalExpression":
        this.value(node.test);
        return new Set(liveBranches(this.names, node).flatMap((branch) => [...this.value(branch)]));
      case "LogicalExpression":
        return new Set([...this.value(node.left), ...this.value(node.right)]);
      case "AwaitExpression":
        return this.value(node.argument);
      case "YieldExpression":
        // What a generator yields goes to whoever iterates it; what next() sends is anything.
        if (node.argument) heap.escape(node.delegate ? this.elements(this.value(node.argument)) : this.value(node.argument));
        return new Set([UNKNOWN]);
      case "Literal":
      case "TemplateLiteral":
      case "BinaryExpression":
      case "UnaryExpression":
      case "UpdateExpression":
        this.#children(node);
        return new Set([PRIMITIVE]);
      case "ImportExpression":
        this.#children(node);
        return new Set([UNKNOWN]);
      default:
        return this.#statement(node);
    }
  }

  #statement(node: AnyNode): Values {
    const heap = this.heap;
    switch (node.type) {
      case "VariableDeclaration":
        for (const d of node.declarations) this.bindPattern(d.id, d.init ? this.value(d.init) : (EMPTY as Values), true);
        break;
      case "ReturnStatement":
        if (node.argument) {
          const v = this.value(node.argument);
          if (this.current) heap.add(this.current.returns, v);
        }
        break;
      case "ThrowStatement":
        heap.escape(this.value(node.argument));
        break;
      case "ForOfStatement":
      case "ForInStatement": {
        if (node.type === "ForInStatement" && forInCopy(this, node)) break;
        const right = this.value(node.right);
        // for-in gives the keys: strings, nothing to call.
        const each = node.type === "ForOfStatement" ? this.elements(right) : new Set([PRIMITIVE]);
        if (node.left.type === "VariableDeclaration") this.bindPattern(node.left.declarations[0].id, each, true);
        else this.assign(node.left, each);
        this.value(node.body);
        break;
      }
      case "CatchClause":
        if (node.param) this.bindPattern(node.param, new Set([UNKNOWN]), true);
        this.value(node.body);
        break;
      default:
        this.#children(node);
    }
    return EMPTY as Values;
  }

  #children(node: AnyNode): void {
    forEachChild(node, (child) => {
      this.value(child);
    });
  }

  /** What iterating `values` gives: an array's elements, or anything for a value from elsewhere. */
  elements(values: Values): Values {
    return this.heap.read(values, ELEMENTS);
  }

  #function(node: AnyNode): Values {
    const heap = this.heap;
    const fn = heap.fnToken(node);
    const saved = { current: this.current, thisValues: this.thisValues };
    this.current = fn;
    if (node.type !== "ArrowFunctionExpression") this.thisValues = fn.thisValues;
    // A copy (callCopy) is not what the declared name holds.
    if (node.type === "FunctionDeclaration" && node.id && heap.clone?.root !== node) heap.writeName(node.id, [fn]);
    const args = this.names.argumentsOf.get(node);
    if (args) heap.add(heap.bindingValues(args), [fn.args]);
    const fromHost = heap.hostCalled.has(fn);
    if (fromHost) {
      heap.add(fieldOf(fn.args.fields, ELEMENTS), [UNKNOWN]);
      if (node.type !== "ArrowFunctionExpression") heap.add(fn.thisValues, [UNKNOWN]);
    }
    node.params.forEach((param: AnyNode, i: number) => this.bindParameter(fn, param, i, fromHost ? new Set([UNKNOWN]) : (EMPTY as Values), true));
    if (node.body.type === "BlockStatement") this.value(node.body);
    else if (!this.#copyGetters.has(node)) heap.add(fn.returns, this.value(node.body));
    this.current = saved.current;
    this.thisValues = saved.thisValues;
    return new Set([fn]);
  }

  /** Binds parameter `i` of `fn`; `evaluate` where defaults are evaluated (in the function, not at a call). */
  bindParameter(fn: FnToken, param: AnyNode, i: number, values: Values, evaluate: boolean): void {
    if (param.type !== "RestElement") {
      this.bindPattern(param, values, evaluate);
      return;
    }
    const rest = fn.restArray(i);
    this.heap.add(fieldOf(rest.fields, ELEMENTS), values);
    this.bindPattern(param.argument, new Set([rest]), evaluate);
  }

  /** A call of `fn` (not `new`): arguments into parameters (its copy's, if it is in one), the receiver into `this`. */
  callFunction(fn: FnToken, args: Args, receiver: Values | null): void {
    const heap = this.heap;
    const outer = heap.clone;
    heap.clone = fn.clone;
    // Only a function that reads `arguments` can see them all together: for the others, one
    // set of every call's arguments would only grow (a bundle's require gets every module).
    if (this.names.argumentsOf.has(fn.node)) heap.add(fieldOf(fn.args.fields, ELEMENTS), args.all());
    if (receiver && fn.node.type !== "ArrowFunctionExpression") heap.add(fn.thisValues, receiver);
    fn.node.params.forEach((param: AnyNode, i: number) => this.bindParameter(fn, param, i, param.type === "RestElement" ? args.from(i) : args.at(i), false));
    heap.clone = outer;
  }

  /**
   * A call of a small function, evaluated as its own copy (see Clone): what it returns to
   * this call only. Null when it is not copied: too large, or already being evaluated
   * (recursion), or a function of a copy itself.
   */
  callCopy(fn: FnToken, args: Args, receiver: Values | null, call: AnyNode): Values | null {
    const node = fn.node;
    if (fn.isClass || fn.clone || fn.info!.isGenerator || fn.info!.kind === "init" || node.end - node.start > MAX_COPIED_LENGTH || this.#copying.has(node))
      return null;
    const heap = this.heap;
    const outer = heap.clone;
    const clone = heap.cloneOf(node, call);
    recordKeys(heap, clone, args);
    heap.clone = clone;
    const copy = heap.fnToken(node);
    this.callFunction(copy, args, receiver);
    // Once a pass: a call met again in the same pass (the copy of a helper that calls it)
    // finds what the copy gave so far; the next pass sees the rest.
    if (!this.#copied.has(clone)) {
      this.#copied.add(clone);
      this.#copying.add(node);
      const saved = { current: this.current, thisValues: this.thisValues };
      this.#function(node);
      this.current = saved.current;
      this.thisValues = saved.thisValues;
      this.#copying.delete(node);
    }
    heap.clone = outer;
    return copy.returns;
  }

  bindPattern(pattern: AnyNode, values: Values, evaluate: boolean): void {
    switch (pattern.type) {
      case "Identifier":
        this.heap.writeName(pattern, values);
        break;
      case "ObjectPattern":
        for (const p of pattern.properties) {
          if (p.type === "RestElement") {
            this.bindPattern(p.argument, values, evaluate);
            continue;
          }
          if (p.computed && evaluate) this.value(p.key);
          this.bindPattern(p.value, this.heap.read(values, keyName(p.key, p.computed)), evaluate);
        }
        break;
      case "ArrayPattern": {
        const each = this.elements(values);
        for (const e of pattern.elements)
          if (e) this.bindPattern(e.type === "RestElement" ? e.argument : e, e.type === "RestElement" ? values : each, evaluate);
        break;
      }
      case "AssignmentPattern":
        this.bindPattern(pattern.left, evaluate ? new Set([...values, ...this.value(pattern.right)]) : values, evaluate);
        break;
      case "MemberExpression":
        this.#storeMember(pattern, values);
        break;
    }
  }

  assign(target: AnyNode, values: Values): void {
    if (target.type === "MemberExpression") this.#storeMember(target, values);
    else this.bindPattern(target, values, true);
  }

  #assignment(node: AnyNode): Values {
    const right = this.value(node.right);
    if (node.operator === "=") this.assign(node.left, right);
    else if (node.operator === "||=" || node.operator === "&&=" || node.operator === "??=")
      this.assign(node.left, new Set([...this.value(node.left), ...right]));
    else this.value(node.left);
    return right;
  }

  #storeMember(target: AnyNode, values: Values): void {
    const objects = target.object.type === "Super" ? this.thisValues : this.value(target.object);
    const hostObject = target.object.type === "Identifier" ? target.object.name : undefined;
    for (const name of this.propertyNames(target)) this.heap.store(objects, name, values, hostObject);
  }

  /** A member's property name, evaluating a computed key; null when only known at run time. */
  propertyName(member: AnyNode): string | null {
    const names = this.propertyNames(member);
    return names.length === 1 ? names[0]! : null;
  }

  /** Each name a member's property may be (computedKeys: `o[c ? "a" : "b"]` is o.a or o.b); [null] when only known at run time. */
  propertyNames(member: AnyNode): (string | null)[] {
    if (!member.computed) return [keyName(member.property, false)];
    this.value(member.property);
    return computedKeys(this.heap, member.property) ?? [null];
  }

  #member(node: AnyNode): Values {
    const names = this.propertyNames(node);
    return readKeys(this.heap, node.object.type === "Super" ? this.superObjects() : this.value(node.object), names);
  }

  /** What `super.m` reads from: the parent class's prototype (and the class, for a static method). */
  superObjects(): Values {
    const out: Values = new Set();
    const cls = this.classes.at(-1);
    for (const s of cls?.superValues ?? []) {
      out.add(s);
      if (s.kind === "fn") out.add(s.prototypeObject());
    }
    return out;
  }
}
