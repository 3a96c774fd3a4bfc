/**
 * esbuild's runtime helpers, as the async rewrite's flow analysis sees them: by what they do
 * at each call, not by their bodies. One `__export` or `__commonJS` serves every module of
 * the bundle, so followed through its body (the analysis does not tell one call of a
 * function from another) every module's exports would reach every other's, and the
 * analysis would slow down under the sets. At its call, each does one module's work:
 *
 *  - `__export(target, { key: () => local })`: target's `key` is local;
 *  - `__copyProps(to, from)`, `__reExport(to, from)`: to holds from's fields;
 *  - `__toCommonJS(mod)`, `__toESM(mod)`: mod (for `__toESM`, mod is its `default` too);
 *  - `__commonJS({ path(exports, module) {…} })`: a `require_x()` that runs that body with
 *    its own `module`, and returns `module.exports`;
 *  - `__esm({ path() {…} })`: an `init_x()` that runs that body.
 *
 * A name is taken as esbuild's only when it is declared in the bundle (never for a global).
 */
import { Args } from "./async-transform-args.ts";
import { copyFields } from "./async-transform-literals.ts";
import type { CallFacts, Evaluator as Flow } from "./async-transform-types.ts";
import { fieldOf, isHeap, type ObjToken, type Token, UNKNOWN, type Values } from "./async-transform-values.ts";
import type { AnyNode } from "./async-transform-walk.ts";

/** A `require_x` made by `__commonJS`, or an `init_x` made by `__esm`. */
const MODULE_RUNNER = new Set(["commonjs-require", "esm-init"]);

/** The values of a call of one of esbuild's helpers, or null when the callee is not one. */
export function esbuildHelper(flow: Flow, callee: AnyNode, node: AnyNode, args: Args): Values | null {
  if (callee.type !== "Identifier" || !flow.names.refs.get(callee)) return null;
  const heap = flow.heap;
  const objects = (values: Values) => [...values].filter(isHeap);
  switch (callee.name) {
    case "__export":
      for (const target of objects(args.at(0)))
        for (const all of objects(args.at(1))) for (const [key, getters] of all.fields) heap.add(fieldOf(target.fields, key), returnsOf(getters));
      return new Set();
    case "__copyProps":
    case "__reExport":
      for (const target of objects(args.at(0))) copyFields(heap, args.at(1), target.fields);
      for (const target of objects(args.at(2))) copyFields(heap, args.at(1), target.fields);
      return args.at(callee.name === "__reExport" && node.arguments.length > 2 ? 2 : 0);
    case "__toCommonJS":
      return args.at(0);
    case "__toESM": {
      const made = heap.objectAt(node, "module");
      copyFields(heap, args.at(0), made.fields);
      heap.add(fieldOf(made.fields, "default"), args.at(0));
      return new Set([made]);
    }
    case "__commonJS":
    case "__esm": {
      const runner = heap.objectAt(node, callee.name === "__esm" ? "esm-init" : "commonjs-require");
      heap.add(fieldOf(runner.fields, "#bodies"), heap.read(args.at(0), null));
      return new Set([runner]);
    }
    default:
      return null;
  }
}

export const isModuleRunner = (t: Token): t is ObjToken => t.kind === "obj" && MODULE_RUNNER.has(t.label);

/** Calling a `require_x()` or an `init_x()`: its module's body runs; require gives `module.exports`. */
export function runModule(flow: Flow, facts: CallFacts, runner: ObjToken): Values {
  const heap = flow.heap;
  const module = heap.objectAt(runner.site!.arguments?.[0] ?? runner.site!, "module");
  const exports = heap.objectAt(runner.site!, "exports");
  heap.add(fieldOf(module.fields, "exports"), [exports]);
  const args = runner.label === "esm-init" ? new Args([]) : new Args([new Set([exports]), new Set([module])]);
  for (const body of runner.fields.get("#bodies") ?? []) {
    if (body.kind !== "fn" || body.isClass) continue;
    facts.functions.add(body);
    flow.callFunction(body, args, null);
  }
  return runner.label === "esm-init" ? new Set() : heap.read([module], "exports");
}

function returnsOf(getters: Values): Values {
  const out: Values = new Set();
  for (const g of getters) for (const v of g.kind === "fn" ? g.returns : [UNKNOWN as Token]) out.add(v);
  return out;
}
