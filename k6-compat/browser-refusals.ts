/**
 * The k6/browser calls edgeload does not make yet, refused when a script is bundled, before
 * any load, naming the call and where it is (bundle.ts): a browser script that would run
 * differently (a file not set, an init script not run) is not run at all.
 *
 * Only names that mean k6's browser are looked for (setInputFiles, addInitScript, …): the
 * script's own objects and other modules have names like `first` or `on` too. A call this
 * scan cannot see (a name computed at run time) meets the page proxy, which names it then
 * (runtime/vu-modules/browser-proxy.ts guarded).
 */
import { type Node, parse } from "acorn";
import { UNBUILT_BROWSER_CALLS, UNBUILT_PROPERTIES } from "./runtime/browser-wire.ts";

/** Whether a source names any of them at all: most files are not parsed. */
const MENTIONS = new RegExp(`\\b(${[...Object.keys(UNBUILT_BROWSER_CALLS), ...Object.keys(UNBUILT_PROPERTIES)].join("|")})\\b`);

/**
 * The unbuilt calls `source` (a JavaScript module; TypeScript is stripped by esbuild first, so
 * a parse failure here leaves it to the runtime) makes, as `file:line: what it is`.
 */
export function unbuiltBrowserCalls(source: string, file: string): string[] {
  if (!MENTIONS.test(source)) return [];
  let program: Node;
  try {
    program = parse(source, { ecmaVersion: "latest", sourceType: "module", locations: true, allowHashBang: true, allowAwaitOutsideFunction: true });
  } catch {
    return [];
  }
  const found: string[] = [];
  const at = (node: Node) => `${file}:${node.loc?.start.line ?? 0}`;
  walk(program, (node) => {
    if (node.type === "MemberExpression") {
      const name = propertyName(node);
      if (name !== null && Object.hasOwn(UNBUILT_PROPERTIES, name)) found.push(`${at(node)}: k6/browser's .${name}: ${UNBUILT_PROPERTIES[name]}`);
    }
    if (node.type !== "CallExpression") return;
    const callee = (node as unknown as { callee: Node }).callee;
    if (callee.type !== "MemberExpression") return;
    const name = propertyName(callee);
    if (name === null) return;
    if (Object.hasOwn(UNBUILT_BROWSER_CALLS, name)) found.push(`${at(node)}: k6/browser's .${name}(): ${UNBUILT_BROWSER_CALLS[name]}`);
  });
  return found;
}

/** `x.name` or `x["name"]`: the name, else null. */
function propertyName(member: Node): string | null {
  const m = member as unknown as { computed: boolean; property: Node & { name?: string; value?: unknown } };
  if (!m.computed && m.property.type === "Identifier") return m.property.name ?? null;
  if (m.computed && m.property.type === "Literal" && typeof m.property.value === "string") return m.property.value;
  return null;
}

/** Every node under `node`, depth first. */
function walk(node: Node, visit: (node: Node) => void): void {
  visit(node);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const child of value) if (isNode(child)) walk(child, visit);
    } else if (isNode(value)) walk(value, visit);
  }
}

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
