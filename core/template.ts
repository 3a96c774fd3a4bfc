/**
 * Template values in request paths, header values and bodies: `{{name}}`.
 *
 * Names: `iteration` (global iteration index), `shard`, `region`, `uuid`, `timestamp`
 * (ms since epoch), `randomInt(min,max)` (inclusive), `vars.NAME` and `secrets.NAME`
 * (from the spec). Templates are compiled once per shard; a string without `{{` compiles
 * to a constant, so the send loop pays nothing for templating it does not use.
 */

export interface TemplateContext {
  readonly iteration: number;
  readonly shard: number;
  readonly region: string;
}

export type Template = (ctx: TemplateContext) => string;

type Part = string | Template;

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
const RANDOM_INT = /^randomInt\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$/;

export interface TemplateScope {
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
}

/** Names used in a template that do not resolve, for validation messages. */
export function templateErrors(text: string, scope: TemplateScope): string[] {
  const errors: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    const problem = resolve(m[1]!, scope).error;
    if (problem) errors.push(problem);
  }
  return errors;
}

/** Whether the text mentions `{{secrets.…}}`: such values are redacted when stored. */
export function usesSecrets(text: string): boolean {
  for (const m of text.matchAll(PLACEHOLDER)) if (m[1]!.startsWith("secrets.")) return true;
  return false;
}

export function compileTemplate(text: string, scope: TemplateScope): Template {
  if (!text.includes("{{")) return () => text;
  const parts: Part[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    const { value, error } = resolve(m[1]!, scope);
    if (error || !value) throw new Error(error);
    parts.push(value);
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  if (parts.every((p) => typeof p === "string")) {
    const constant = (parts as string[]).join("");
    return () => constant;
  }
  return (ctx) => {
    let out = "";
    for (const p of parts) out += typeof p === "string" ? p : p(ctx);
    return out;
  };
}

function resolve(name: string, scope: TemplateScope): { value?: Part; error?: string } {
  switch (name) {
    case "iteration": return { value: (ctx) => String(ctx.iteration) };
    case "shard": return { value: (ctx) => String(ctx.shard) };
    case "region": return { value: (ctx) => ctx.region };
    case "uuid": return { value: () => crypto.randomUUID() };
    case "timestamp": return { value: () => String(Date.now()) };
  }
  const random = RANDOM_INT.exec(name);
  if (random) {
    const min = Number(random[1]);
    const max = Number(random[2]);
    if (max < min) return { error: `{{${name}}}: max is below min` };
    return { value: () => String(min + Math.floor(Math.random() * (max - min + 1))) };
  }
  for (const kind of ["vars", "secrets"] as const) {
    if (name.startsWith(`${kind}.`)) {
      const key = name.slice(kind.length + 1);
      const value = scope[kind][key];
      return value === undefined ? { error: `{{${name}}}: no ${kind} entry named "${key}"` } : { value };
    }
  }
  return { error: `{{${name}}}: unknown template value; use iteration, shard, region, uuid, timestamp, randomInt(a,b), vars.NAME or secrets.NAME` };
}
