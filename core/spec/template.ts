/**
 * Template values in request paths, header values and bodies: `{{name}}`.
 *
 * Names: `iteration` (global iteration index for arrival-rate executors; for VU executors
 * the VU's own iteration number, like k6's `__ITER`, counted from the start of the shard's
 * current invocation — not unique across a handoff, use `uuid` or `randomString(n)` for
 * unique data), `vu` (k6's `__VU`, 1-based; 0 for
 * arrival-rate executors), `shard`, `region`, `uuid`, `timestamp` (ms since epoch),
 * `randomInt(min,max)` (inclusive), `zipf(n,s)` (a key 1…n, hot keys first: key k with
 * probability ∝ 1/k^s, see core/data/zipf.ts), `randomString(n)` (n letters and digits),
 * `randomEmail` (a fresh address under example.test), `vars.NAME` and `secrets.NAME`
 * (from the spec), `setup.NAME` (a value the run's setup steps captured, the same for every
 * shard), `data.FIELD` (a field of the seed record the iteration took, see
 * core/data/seed-records.ts), and `captured.NAME` (a value an earlier step of the flow captured from
 * its response, see core/spec/capture.ts; inserted as is, without escaping). Every
 * generator gives a fresh value at each use. Templates are compiled once per shard; a
 * string without `{{` compiles to a constant, so the send loop pays nothing for
 * templating it does not use.
 */
import { MAX_ZIPF_KEYS, zipfSampler } from "../data/zipf.ts";

export interface TemplateContext {
  readonly iteration: number;
  readonly shard: number;
  readonly region: string;
  readonly vu?: number;
  /** This VU's (or, for arrival-rate executors, this iteration's) captured values. */
  readonly captured?: ReadonlyMap<string, string>;
  /** The seed record this iteration took (specs with `data`, see core/data/seed-records.ts). */
  readonly data?: Readonly<Record<string, string>>;
}

export type Template = (ctx: TemplateContext) => string;

type Part = string | Template;

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
const RANDOM_INT = /^randomInt\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$/;
/** `zipf(n, s)`: a key 1…n, key k with probability ∝ 1/k^s (core/data/zipf.ts). */
const ZIPF = /^zipf\(\s*(\d+)\s*,\s*(\d+(?:\.\d+)?)\s*\)$/;
const RANDOM_STRING = /^randomString\(\s*(\d+)\s*\)$/;
const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

export interface TemplateScope {
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  /** Names captured by earlier steps; `{{captured.X}}` for any other X is an error. */
  readonly captured?: ReadonlySet<string>;
  /** What the run's setup steps captured (names only while validating a spec). */
  readonly setup?: Readonly<Record<string, string>>;
  /** Whether the spec reads a seed set with `data` (its fields are checked against the set's kind when the run is created). */
  readonly data?: boolean;
}

/** n random letters and digits (crypto-random, so parallel VUs do not collide). */
export function randomString(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let out = "";
  // 62 symbols from a byte: the slight bias towards the first 8 is irrelevant for test data.
  for (const b of bytes) out += ALPHANUMERIC[b % ALPHANUMERIC.length];
  return out;
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

/** The fields a text reads as `{{data.FIELD}}`. */
export function dataFields(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)]
    .map((m) => m[1]!)
    .filter((n) => n.startsWith("data."))
    .map((n) => n.slice("data.".length));
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
    if (error || value === undefined) throw new Error(error);
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
    case "iteration":
      return { value: (ctx) => String(ctx.iteration) };
    case "shard":
      return { value: (ctx) => String(ctx.shard) };
    case "region":
      return { value: (ctx) => ctx.region };
    case "vu":
      return { value: (ctx) => String(ctx.vu ?? 0) };
    case "uuid":
      return { value: () => crypto.randomUUID() };
    case "timestamp":
      return { value: () => String(Date.now()) };
    case "randomEmail":
      return { value: () => `user_${randomString(16).toLowerCase()}@example.test` };
  }
  const randomLength = RANDOM_STRING.exec(name);
  if (randomLength) {
    const n = Number(randomLength[1]);
    if (n < 1 || n > 256) return { error: `{{${name}}}: the length must be 1–256` };
    return { value: () => randomString(n) };
  }
  if (name.startsWith("data.")) {
    const key = name.slice("data.".length);
    if (!scope.data) return { error: `{{${name}}}: the spec reads no seed set; add "data": {"seed": "NAME"}` };
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return { error: `{{${name}}}: not a field name` };
    return { value: (ctx) => ctx.data?.[key] ?? "" };
  }
  if (name.startsWith("captured.")) {
    const key = name.slice("captured.".length);
    if (!scope.captured?.has(key)) return { error: `{{${name}}}: no earlier step captures "${key}"` };
    return { value: (ctx) => ctx.captured?.get(key) ?? "" };
  }
  const zipf = ZIPF.exec(name);
  if (zipf) {
    const n = Number(zipf[1]);
    const exponent = Number(zipf[2]);
    if (!(n >= 1 && n <= MAX_ZIPF_KEYS) || !(exponent >= 0 && exponent <= 10)) {
      return { error: `{{${name}}}: use zipf(n, s) with 1 ≤ n ≤ ${MAX_ZIPF_KEYS} keys and an exponent s from 0 to 10` };
    }
    const draw = zipfSampler(n, exponent);
    return { value: () => String(draw(Math.random())) };
  }
  const random = RANDOM_INT.exec(name);
  if (random) {
    const min = Number(random[1]);
    const max = Number(random[2]);
    if (max < min) return { error: `{{${name}}}: max is below min` };
    return { value: () => String(min + Math.floor(Math.random() * (max - min + 1))) };
  }
  for (const kind of ["vars", "secrets", "setup"] as const) {
    if (name.startsWith(`${kind}.`)) {
      const key = name.slice(kind.length + 1);
      const value = scope[kind]?.[key];
      if (value !== undefined) return { value };
      return { error: kind === "setup" ? `{{${name}}}: no setup step captures "${key}"` : `{{${name}}}: no ${kind} entry named "${key}"` };
    }
  }
  return {
    error: `{{${name}}}: unknown template value; use iteration, vu, shard, region, uuid, timestamp, randomInt(a,b), zipf(n,s), randomString(n), randomEmail, vars.NAME, secrets.NAME, setup.NAME, data.FIELD or captured.NAME`,
  };
}
