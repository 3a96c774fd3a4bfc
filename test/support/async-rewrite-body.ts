/**
 * The async rewrite (k6-compat/async-transform.ts) of a few statements, for its rule tests: the
 * body is wrapped in a module-like closure exporting `f`, rewritten with k6's blocking names,
 * and given back without the wrapper (or "refused: …" with the problems).
 */
import { makeBlockingCallsAwaited } from "../../k6-compat/async-transform.ts";
import { isBlockingMember, isBlockingName } from "../../k6-compat/modules.ts";

const roots = { isAsyncName: isBlockingName, isAsyncMember: isBlockingMember };
const wrap = (body: string) => `var s = (() => {\n${body}\nreturn { f };\n})();`;

/** The rewritten body alone, or the problems joined. */
export function rewriteBody(body: string): string {
  const r = makeBlockingCallsAwaited(wrap(body), roots);
  return r.ok ? r.code.slice("var s = (() => {\n".length, r.code.indexOf("\nreturn { f };")) : `refused: ${r.problems.join("; ")}`;
}
