/**
 * What a variable holds while its own assignment runs, for the async rewrite's flow analysis:
 * in `x = f(x)` the `x` read is the value before, never the one being assigned. The analysis
 * is flow-insensitive, so without this the read would see the assignment's own result too.
 * A UMD wrapper that webpack rewrites, `e = typeof e == "function" ? e.call(exports,
 * require, exports, module) : e`, would then call what its factory returned (a function
 * type-detect returns, which returns what it reads from require) with require, and require
 * would reach code the analysis does not see.
 *
 * The read gets a binding of its own ("before") that every write to the variable reaches
 * except that assignment's. It holds only when the assignment runs once per activation of
 * the variable's function — not in a loop nor in a nested function — and only for reads in
 * the right side itself, not in a closure made there (which may run after the assignment).
 */
import { type AnyNode, type Binding, FUNCTION_TYPES, forEachChild } from "./async-transform-walk.ts";

/** A self-assignment `x = …x…`: the binding its reads of x see, and its target (whose write does not reach it). */
export interface SelfAssignment {
  readonly before: Binding;
  readonly target: AnyNode;
}

const LOOPS = new Set(["ForStatement", "ForInStatement", "ForOfStatement", "WhileStatement", "DoWhileStatement"]);

/** Finds the self-assignments of `program`, remapping their reads in `refs`; by the variable assigned. */
export function splitSelfAssignments(program: AnyNode, refs: Map<AnyNode, Binding | null>): Map<Binding, SelfAssignment[]> {
  const out = new Map<Binding, SelfAssignment[]>();
  const visit = (node: AnyNode, owner: AnyNode, inLoop: boolean) => {
    if (node.type === "AssignmentExpression" && node.operator === "=" && node.left.type === "Identifier" && !inLoop) {
      const binding = refs.get(node.left);
      const reads = binding && binding.declaredIn === owner ? ownReads(node.right, binding, refs) : [];
      if (binding && reads.length) {
        const before: Binding = { name: binding.name, declaredIn: binding.declaredIn };
        for (const id of reads) refs.set(id, before);
        out.set(binding, [...(out.get(binding) ?? []), { before, target: node.left }]);
      }
    }
    forEachChild(node, (child) => {
      if (FUNCTION_TYPES.has(child.type)) visit(child, child, false);
      else visit(child, owner, inLoop || LOOPS.has(node.type));
    });
  };
  visit(program, program, false);
  return out;
}

/** The identifiers in `node` that read `binding`, outside the functions made in it. */
function ownReads(node: AnyNode, binding: Binding, refs: ReadonlyMap<AnyNode, Binding | null>): AnyNode[] {
  const found: AnyNode[] = [];
  const search = (n: AnyNode) => {
    if (n.type === "Identifier" && refs.get(n) === binding) found.push(n);
    forEachChild(n, (child) => {
      if (!FUNCTION_TYPES.has(child.type)) search(child);
    });
  };
  search(node);
  return found;
}
