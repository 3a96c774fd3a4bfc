/** Test helpers: a spec that must validate, or the problems of one that must not. */
import { parseRunSpec, type Problem, type RunSpec } from "../../core/spec/run-spec.ts";

export function validSpec(input: unknown): RunSpec {
  const r = parseRunSpec(input);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.spec;
}

export function specProblems(input: unknown): Problem[] {
  const r = parseRunSpec(input);
  if (r.ok) throw new Error("expected problems");
  return r.problems;
}
