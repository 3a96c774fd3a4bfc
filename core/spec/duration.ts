/**
 * k6-style durations: "500ms", "30s", "1m30s", "1h", "1.5s", or a number of milliseconds.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;

/** Milliseconds, or undefined when `input` is not a duration. */
export function parseDurationMs(input: unknown): number | undefined {
  if (typeof input === "number") return Number.isFinite(input) && input >= 0 ? input : undefined;
  if (typeof input !== "string" || input.length === 0) return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < input.length) {
    const start = PART.lastIndex;
    const m = PART.exec(input);
    if (!m || m.index !== start) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  }
  return total;
}
