/**
 * The table a bundle carries from its lines back to the script's own files and lines
 * (runtime/script-failure.ts reads it to say where an iteration threw), built from
 * esbuild's source map when bundling.
 *
 * Source maps (https://tc39.es/ecma426/) give each generated segment its source, line and
 * column as base64 VLQ deltas; a line of the bundle is taken at its first segment. The
 * table keeps runs of lines that follow their source one for one, so a bundle whose lines
 * track the script's costs a few numbers per function, not one per line.
 */
import type { ScriptLines } from "./runtime/script-failure.ts";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** The numbers of one segment: base64 VLQ, 5 bits a digit, sign in the lowest bit. */
function decodeSegment(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of segment) {
    const digit = DIGIT.get(c);
    if (digit === undefined) throw new Error(`not base64 VLQ: ${segment}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return out;
}

/**
 * The runs of `map` (a source map's JSON) for a bundle whose first line is line
 * `firstLine` of the module it ends up in.
 *
 * @example
 * sourceLines({ sources: ["test.js"], mappings: "AAAA;AACA" }, 4)
 * // → { sources: ["test.js"], runs: [4, 0, 1] }: module lines 4, 5, … are test.js 1, 2, …
 */
export function sourceLines(map: { readonly sources: readonly string[]; readonly mappings: string }, firstLine: number): ScriptLines {
  const runs: number[] = [];
  let source = 0;
  let sourceLine = 0;
  let current: { source: number; offset: number } | null = null;
  map.mappings.split(";").forEach((line, generated) => {
    let first: { source: number; line: number } | null = null;
    for (const segment of line.split(",")) {
      if (!segment) continue;
      const fields = decodeSegment(segment);
      if (fields.length < 4) continue;
      source += fields[1]!;
      sourceLine += fields[2]!;
      first ??= { source, line: sourceLine };
    }
    if (!first) return;
    const moduleLine = firstLine + generated;
    const offset = first.line + 1 - moduleLine;
    if (current && current.source === first.source && current.offset === offset) return;
    current = { source: first.source, offset };
    runs.push(moduleLine, first.source, first.line + 1);
  });
  return { sources: [...map.sources], runs };
}
