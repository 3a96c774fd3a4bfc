/**
 * The structure rules no formatter or import checker holds (`npm run lint:deps` runs it after
 * dependency-cruiser; .ci/run runs that before any test):
 *
 *  - no product file over MAX_FILE_LINES lines: a file a reader must page through has grown two ideas;
 *  - no function over MAX_FUNCTION_LINES lines (declarations, expressions, arrows, methods,
 *    each measured over its whole span): one a reader must scroll is split along an idea;
 *  - no bare `fetch` in the deployed Worker's code outside the outbound module
 *    (workers/outbound/): every request the Worker sends goes through its policy (allow-list
 *    per hop, credentials dropped across origins, timeouts), and a bare fetch is how a path
 *    slips around it. Code that never runs in the deployed Worker (the CLI, seeders, benches,
 *    the target and fetch-floor Workers, the browser pages) talks to its own API or to the
 *    user's machine and is outside this rule.
 *
 * Product code is every tracked .ts/.mts/.js/.mjs file but tests (test/, *.test.ts), test
 * helpers and vendored files. Prints one line per breach and exits 1 when there is any.
 *
 *   node scripts/lint/structure.mjs            # check the tree
 *   node scripts/lint/structure.mjs --report   # also list the largest files and functions
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import ts from "typescript";

export const MAX_FILE_LINES = 350;
export const MAX_FUNCTION_LINES = 80;

/** Not product code: tests, their helpers and fixtures, vendored browser files. */
const NOT_PRODUCT = [/^test\//, /\.test\.ts$/, /-fixtures\.ts$/, /(^|\/)test-support\.ts$/, /\/vendor\//, /(^|\/)vitest\.config\.ts$/, /\.d\.m?ts$/];
/** The deployed Worker's code, where only the outbound module may call fetch. */
const WORKER_CODE = /^(core|scenarios|k6-compat\/runtime|workers\/shard|coordinator)\//;
const OUTBOUND_MODULE = /^workers\/outbound\//;

export function productFiles(root = ".") {
  const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" }).split("\n");
  return tracked.filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !NOT_PRODUCT.some((re) => re.test(f)));
}

/** Every function in `source` with its name (as a reader would call it) and its line span. */
export function functionsOf(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith("ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found = [];
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = lineOf(node.getStart(source));
      const last = lineOf(node.getEnd());
      found.push({ name: nameOf(node), firstLine: first, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && ts.isPrivateIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return "(anonymous)";
}

/** Each place `text` names the global fetch as a value: `fetch(…)`, `fetch.bind(…)`, `globalThis.fetch`. */
export function bareFetchesOf(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isIdentifier(node) && node.text === "fetch" && isGlobalValueUse(node))
      found.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "globalThis" && node.name.text === "fetch")
      found.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isGlobalValueUse(id) {
  const parent = id.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === id) return false; // x.fetch
  if (
    (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent)) &&
    parent.name === id
  )
    return false; // { fetch: … }, fetch() { … }
  if (ts.isMethodSignature(parent) || ts.isTypeQueryNode(parent) || ts.isQualifiedName(parent)) return false; // typeof fetch
  if (ts.isShorthandPropertyAssignment(parent)) return true; // { fetch } hands the global on
  if (ts.isParameter(parent) || ts.isVariableDeclaration(parent) || ts.isBindingElement(parent)) return false; // a local named fetch
  return !declaredLocally(id);
}

/** Whether an enclosing scope binds `fetch` (a parameter or local), so the name is not the global. */
function declaredLocally(id) {
  for (let scope = id.parent; scope; scope = scope.parent) {
    if (ts.isFunctionLike(scope) && scope.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === "fetch")) return true;
    if (ts.isBlock(scope) || ts.isSourceFile(scope)) {
      const binds = scope.statements.some(
        (s) => ts.isVariableStatement(s) && s.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === "fetch"),
      );
      if (binds) return true;
    }
  }
  return false;
}

export function breaches(root = ".") {
  const out = [];
  const largest = [];
  for (const path of productFiles(root)) {
    const text = readFileSync(`${root}/${path}`, "utf8");
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines > MAX_FILE_LINES) out.push(`${path}: ${lines} lines (at most ${MAX_FILE_LINES} a file)`);
    for (const f of functionsOf(path, text)) {
      largest.push({ path, ...f });
      if (f.lines > MAX_FUNCTION_LINES) out.push(`${path}:${f.firstLine}: function ${f.name} is ${f.lines} lines (at most ${MAX_FUNCTION_LINES})`);
    }
    if (WORKER_CODE.test(path) && !OUTBOUND_MODULE.test(path))
      for (const line of bareFetchesOf(path, text))
        out.push(`${path}:${line}: a bare fetch in the Worker's code: send through the outbound module (workers/outbound/outbound-fetch.ts)`);
  }
  return { out, largest };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { out, largest } = breaches();
  if (process.argv.includes("--report"))
    for (const f of largest.sort((a, b) => b.lines - a.lines).slice(0, 25)) console.log(`${String(f.lines).padStart(4)} ${f.path}:${f.firstLine} ${f.name}`);
  for (const line of out) console.error(line);
  if (out.length > 0) {
    console.error(`structure: ${out.length} breach${out.length === 1 ? "" : "es"} (scripts/lint/structure.mjs says why each rule exists)`);
    process.exit(1);
  }
  console.log("structure: every product file, function and outbound request within the rules");
}
