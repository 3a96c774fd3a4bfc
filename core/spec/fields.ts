/**
 * Building blocks every section of the spec schema shares: durations written k6's way,
 * counts, and turning zod's issues into problems that name their field.
 */
import { z } from "zod";
import { parseDurationMs } from "./duration.ts";
import type { Problem } from "./input-problem.ts";

/** A duration like "30s", "1m30s" or "500ms" (or a number of ms), decoded to milliseconds. */
export const duration = (what: string) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const ms = parseDurationMs(v);
    if (ms === undefined) {
      ctx.addIssue({ code: "custom", message: `${JSON.stringify(v)} is not a ${what} like "30s", "1m30s" or "500ms"` });
      return z.NEVER;
    }
    return ms;
  });

export const positiveInt = z.number().int().positive();

const SHARE = "a share of the schedule from 0 to 1, e.g. 0.01 for 1 %";
/**
 * `maxNotSentShare`: how much of its schedule edgeload itself may fail to send (shard
 * restarts, late starts) before a run cannot pass (core/run/not-sent.ts); absent: 1 %.
 */
export const maxNotSentShareSchema = z.number(SHARE).min(0, SHARE).max(1, SHARE).optional();
export const nonNegative = z.number().nonnegative();

export function toProblems(error: z.ZodError, prefix: (string | number)[] = []): Problem[] {
  return error.issues.map((issue) => ({
    field: [...prefix, ...issue.path].map(String).join(".") || "(root)",
    detail: issue.message,
  }));
}

/** The same problem reported by two decoding steps is shown once. */
export function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.field}\u0000${p.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
