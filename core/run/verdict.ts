/**
 * One verdict for everything a pipeline gates on — a run's end, `compare`, `crosscheck`
 * (plain and `--abba`) and `ladder`: passed, failed, or inconclusive with its reasons. A
 * result that could not be established (shards that never reported, a threshold whose
 * metric has no data, nothing to compare) is inconclusive, and inconclusive never exits 0.
 *
 * k6 keeps "thresholds failed" (99) apart from "the script could not run" (107) and
 * "aborted" (108); it has no code for "could not tell", so edgeload takes sysexits.h's
 * EX_TEMPFAIL (75): the run or comparison may well pass when tried again with data.
 */

export type Verdict =
  | { readonly kind: "passed" }
  | { readonly kind: "failed"; readonly reasons: readonly string[] }
  | { readonly kind: "inconclusive"; readonly reasons: readonly string[] };

export type VerdictKind = Verdict["kind"];

export const PASSED: Verdict = Object.freeze({ kind: "passed" });

export function failed(...reasons: string[]): Verdict {
  return { kind: "failed", reasons };
}

export function inconclusive(...reasons: string[]): Verdict {
  return { kind: "inconclusive", reasons };
}

/** The exit code of each verdict: k6's 0 and 99, and 75 (EX_TEMPFAIL) for "could not tell". */
export const VERDICT_EXIT_CODES = { passed: 0, failed: 99, inconclusive: 75 } as const satisfies Record<VerdictKind, number>;

export function verdictExitCode(v: Verdict): (typeof VERDICT_EXIT_CODES)[VerdictKind] {
  return VERDICT_EXIT_CODES[v.kind];
}

const RANK: Record<VerdictKind, number> = { passed: 0, inconclusive: 1, failed: 2 };

/**
 * The verdict of several parts together: failed if any part failed (a failure found in
 * part of the data is a failure), else inconclusive if any part could not be told, else
 * passed. Only the deciding kind's reasons are kept; no parts at all is inconclusive.
 */
export function combineVerdicts(parts: readonly Verdict[], nothing = "nothing to decide on"): Verdict {
  if (parts.length === 0) return inconclusive(nothing);
  const worst = parts.reduce((a, b) => (RANK[b.kind] > RANK[a.kind] ? b : a));
  if (worst.kind === "passed") return PASSED;
  const reasons = parts.flatMap((p) => (p.kind === worst.kind ? p.reasons : []));
  return { kind: worst.kind, reasons };
}

/** "passed", "failed: a; b" or "inconclusive: a; b", as a line of text shows it. */
export function describeVerdict(v: Verdict): string {
  return v.kind === "passed" ? "passed" : `${v.kind}: ${v.reasons.join("; ")}`;
}
