/**
 * The k6/browser calls edgeload does not make yet, refused when a script is bundled, before
 * any load, naming the call and where it is (bundle.ts): a browser script that would run
 * differently (no navigation wait, no throttling, no page events) is not run at all.
 *
 * Only names that mean k6's browser are looked for (waitForNavigation, getByRole, …), and
 * `.on(…)` with one of a page's event names: the script's own objects and other modules
 * (`socket.on("open")`, `list.filter`) have names like `first` or `on` too. A call this scan
 * cannot see (a name computed at run time) meets the page proxy, which names it then
 * (runtime/vu-modules/browser.ts).
 */
import { type Node, parse } from "acorn";
import { PREDICATE_REFUSAL, UNBUILT_BROWSER_CALLS, UNBUILT_PROPERTIES } from "./runtime/browser-wire.ts";

/** A page's events (page.on) not built yet: `console` and `metric` are (vu-modules/browser.ts), the requests' are not. */
const PAGE_EVENTS = new Set(["request", "response", "requestfailed", "requestfinished"]);

/** Whether a source names any of them at all: most files are not parsed. */
const MENTIONS = new RegExp(`\\b(${[...Object.keys(UNBUILT_BROWSER_CALLS), ...Object.keys(UNBUILT_PROPERTIES), "on", "waitForEvent"].join("|")})\\b`);

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
    const first = (node as unknown as { arguments: Node[] }).arguments[0] as (Node & { value?: unknown }) | undefined;
    if (name === "on" && first?.type === "Literal" && PAGE_EVENTS.has(String(first.value)))
      found.push(`${at(node)}: k6/browser's page.on("${String(first.value)}"): only page.on("console") and page.on("metric") are built in edgeload yet`);
    if (name === "waitForEvent" && hasPredicate((node as unknown as { arguments: Node[] }).arguments[1]))
      found.push(`${at(node)}: k6/browser's page.waitForEvent(…, predicate): ${PREDICATE_REFUSAL}`);
  });
  return found;
}

/**
 * Whether waitForEvent's second argument is seen to be a predicate: a function written there,
 * or options with a `predicate`. One named by a variable is left to the page proxy, which
 * refuses it when called.
 */
function hasPredicate(options: Node | undefined): boolean {
  if (!options) return false;
  if (options.type === "ArrowFunctionExpression" || options.type === "FunctionExpression") return true;
  if (options.type !== "ObjectExpression") return false;
  const properties = (options as unknown as { properties: Array<Node & { key?: Node & { name?: string; value?: unknown } }> }).properties;
  return properties.some((p) => p.key?.name === "predicate" || p.key?.value === "predicate");
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
