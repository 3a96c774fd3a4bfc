/**
 * Captures: values a step takes from its response for later steps (`{{captured.NAME}}`).
 *
 * Three sources, one per capture:
 * - `{ json: "$.a.b[0].c" }` — a small JSON-path subset: `$`, then any sequence of
 *   `.key` (letters, digits, `_`, `-`) and `[index]` (a non-negative integer). No
 *   wildcards, filters or recursive descent: a capture names one value. Strings are taken
 *   as they are, numbers and booleans as their JSON text, objects and arrays as JSON.
 * - `{ header: "x-request-id" }` — a response header (case-insensitive).
 * - `{ regex: "id=(\\w+)" }` — the first match in the body: its first group when the
 *   pattern has one, else the whole match.
 *
 * A capture that finds nothing (no such field, `null`, no header, no match, no response)
 * fails: the caller counts a failed check and skips the iteration's remaining steps.
 *
 * Pure, so spec validation (core/spec/step-schema.ts) checks captures with the same parser
 * the flows (scenarios/custom-steps.ts) run them with.
 */

export type CaptureSpec = { readonly json: string } | { readonly header: string } | { readonly regex: string };

export type JsonPath = ReadonlyArray<string | number>;

const JSON_PATH = /^\$((?:\.[A-Za-z0-9_-]+|\[\d+\])*)$/;
const SEGMENT = /\.([A-Za-z0-9_-]+)|\[(\d+)\]/g;

/**
 * Parses the JSON-path subset into keys and indices, or null when outside it.
 * @example parseJsonPath("$.data.items[0].id") → ["data", "items", 0, "id"]
 */
export function parseJsonPath(path: string): JsonPath | null {
  const m = JSON_PATH.exec(path.trim());
  if (!m) return null;
  return [...m[1]!.matchAll(SEGMENT)].map((s) => (s[1] !== undefined ? s[1] : Number(s[2])));
}

/** The value at `path` in `value`, or undefined when any segment is missing. */
export function jsonPathGet(value: unknown, path: JsonPath): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return undefined;
    if (typeof segment === "number") {
      if (!Array.isArray(current)) return undefined;
      current = current[segment];
    } else {
      if (Array.isArray(current) || !Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

/** Why a capture spec cannot work, or null when it can (for spec validation). */
export function captureError(spec: CaptureSpec): string | null {
  if ("json" in spec) return parseJsonPath(spec.json) ? null : `"${spec.json}" is outside the supported JSON path subset ($.a.b[0].c)`;
  if ("header" in spec) return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(spec.header) ? null : `"${spec.header}" is not a header name`;
  try {
    new RegExp(spec.regex);
    return null;
  } catch (error) {
    return `invalid regular expression: ${(error as Error).message}`;
  }
}

/** A compiled capture: from a response's headers and body to a value, or undefined. */
export type Extractor = (headers: Headers | null, body: string | null) => string | undefined;

export function compileCapture(spec: CaptureSpec): Extractor {
  if ("header" in spec) {
    const name = spec.header;
    return (headers) => headers?.get(name) ?? undefined;
  }
  if ("json" in spec) {
    const path = parseJsonPath(spec.json);
    if (!path) throw new Error(captureError(spec)!);
    return (_headers, body) => {
      if (body === null) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return undefined;
      }
      const v = jsonPathGet(parsed, path);
      if (v === undefined || v === null) return undefined;
      return typeof v === "string" ? v : JSON.stringify(v);
    };
  }
  const pattern = new RegExp(spec.regex);
  return (_headers, body) => {
    const m = body === null ? null : pattern.exec(body);
    if (!m) return undefined;
    return m.length > 1 ? m[1] : m[0];
  };
}

/** Whether the capture reads the body (so the engine must keep it). */
export const readsBody = (spec: CaptureSpec) => !("header" in spec);
