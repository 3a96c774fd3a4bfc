/**
 * A crosscheck that tells the tools apart from the target's own drift. One edgeload run
 * followed by one k6 run reads the target twice at different moments: a target that warms
 * its caches (or drifts) between them makes whichever tool ran second look faster, and a
 * verdict of "disagree" cannot say whether the tools differ or the target moved.
 *
 * ABBA: edgeload (A1), k6 (B1), k6 (B2), edgeload (A2). The two pairs run in opposite
 * orders, so a steady drift adds to one pair's difference what it takes from the other's:
 * the tools' difference is the mean of the two pairs' (A1 − B1, A2 − B2). The two runs of
 * the same tool (A1 and A2, B1 and B2) are an A/A reading: how far the target itself moved
 * between runs, with no tool difference in it. Per row:
 *
 * | verdict                 | when                                                             |
 * |-------------------------|------------------------------------------------------------------|
 * | agree                   | |mean difference| within the row's tolerance (core/results/crosscheck.ts) |
 * | the target moved        | beyond the tolerance, but within the target's own A/A spread     |
 * | differ                  | beyond both the tolerance and the target's A/A spread            |
 *
 * Pure: the four runs' figures in, rows out. Percentiles of different runs are never
 * averaged into a figure: only differences between the tools' readings are.
 */
import { failed, inconclusive, PASSED, type Verdict as GateVerdict } from "../run/verdict.ts";
import { crosscheck, ROW_LABELS, type Crosscheck, type CrosscheckRow, type LoadFigures } from "./crosscheck.ts";
import { formatRowValue } from "./crosscheck-text.ts";

export type AbbaRowVerdict = "agree" | "target moved" | "differ" | "n/a";

export interface AbbaRow {
  readonly metric: CrosscheckRow["metric"];
  readonly step: string | null;
  readonly unit: CrosscheckRow["unit"];
  /** (A1 − B1 + A2 − B2) / 2: the tools' difference with the order's effect cancelled. */
  readonly difference: number | null;
  readonly tolerance: number | null;
  /** The larger A/A spread, |A1 − A2| or |B1 − B2|: how far the target moved between runs. */
  readonly targetSpread: number | null;
  readonly verdict: AbbaRowVerdict;
}

export interface AbbaCrosscheck {
  readonly verdict: "agree" | "differ beyond the target's own noise" | "the target moved too much to tell";
  /** The verdict the exit code is a function of (core/run/verdict.ts). */
  readonly outcome: GateVerdict;
  readonly rows: readonly AbbaRow[];
  /** The two ordinary pairs, as `edgeload crosscheck --k6` shows them. */
  readonly pairs: readonly [Crosscheck, Crosscheck];
  readonly notes: readonly string[];
}

export interface AbbaRuns {
  readonly a1: LoadFigures;
  readonly b1: LoadFigures;
  readonly b2: LoadFigures;
  readonly a2: LoadFigures;
}

const key = (r: Pick<CrosscheckRow, "metric" | "step">) => `${r.step ?? ""}\u0000${r.metric}`;

export function abbaCrosscheck(runs: AbbaRuns): AbbaCrosscheck {
  const first = crosscheck(runs.a1, runs.b1);
  const second = crosscheck(runs.a2, runs.b2);
  // A/A: the same tool twice. crosscheck() gives the difference row by row; its tolerances
  // (meant for two tools) are not used here.
  const edgeAA = new Map(crosscheck(runs.a1, runs.a2).rows.map((r) => [key(r), r.difference]));
  const k6AA = new Map(crosscheck(runs.b1, runs.b2).rows.map((r) => [key(r), r.difference]));
  const seconds = new Map(second.rows.map((r) => [key(r), r]));
  const rows: AbbaRow[] = first.rows.map((r1) => {
    const r2 = seconds.get(key(r1));
    const difference = r1.difference === null || r2?.difference == null ? null : (r1.difference + r2.difference) / 2;
    const spreads = [edgeAA.get(key(r1)), k6AA.get(key(r1))].filter((d): d is number => typeof d === "number").map(Math.abs);
    const targetSpread = spreads.length ? Math.max(...spreads) : null;
    const tolerance = r1.tolerance === null || r2?.tolerance == null ? r1.tolerance : Math.max(r1.tolerance, r2.tolerance);
    return { metric: r1.metric, step: r1.step, unit: r1.unit, difference, tolerance, targetSpread, verdict: rowVerdict(difference, tolerance, targetSpread) };
  });
  const verdict = rows.some((r) => r.verdict === "differ")
    ? "differ beyond the target's own noise"
    : rows.some((r) => r.verdict === "target moved")
      ? "the target moved too much to tell"
      : "agree";
  const notes = [...new Set([...first.notes, ...second.notes])];
  return { verdict, outcome: abbaOutcome(rows), rows, pairs: [first, second], notes };
}

/**
 * Failed when the tools differ beyond the target's own noise; inconclusive when the target
 * moved too much to tell, or no row could be compared; else passed.
 */
function abbaOutcome(rows: readonly AbbaRow[]): GateVerdict {
  const name = (r: AbbaRow) => `${r.metric}${r.step ? ` of ${r.step}` : ""}`;
  const differ = rows.filter((r) => r.verdict === "differ");
  if (differ.length)
    return failed(...differ.map((r) => `${name(r)}: the tools differ by ${r.difference} ${r.unit}, beyond ±${r.tolerance} and the target's own spread`));
  const moved = rows.filter((r) => r.verdict === "target moved");
  if (moved.length)
    return inconclusive(
      ...moved.map((r) => `${name(r)}: the target moved by ${r.targetSpread} ${r.unit} between runs of the same tool, more than the tolerance`),
    );
  if (!rows.some((r) => r.verdict === "agree")) return inconclusive("nothing could be compared: no row has a figure from both tools in both pairs");
  return PASSED;
}

function rowVerdict(difference: number | null, tolerance: number | null, spread: number | null): AbbaRowVerdict {
  if (difference === null || tolerance === null) return "n/a";
  if (Math.abs(difference) <= tolerance) return "agree";
  if (spread !== null && Math.abs(difference) <= spread) return "target moved";
  return "differ";
}

/** The ABBA table: the tools' difference, the tolerance, the target's own spread, a verdict. */
export function renderAbba(c: AbbaCrosscheck): string {
  const header = ["", "Δ edge − k6 (ABBA)", "tolerance", "target A/A spread", "verdict"];
  const lines = c.rows.map((r) => [
    `${r.step === null ? "" : `${r.step}: `}${ROW_LABELS[r.metric]}`,
    formatRowValue(r.difference, r.unit, true),
    r.tolerance === null ? "-" : `±${formatRowValue(r.tolerance, r.unit)}`,
    formatRowValue(r.targetSpread, r.unit),
    r.verdict,
  ]);
  const table = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...table.map((l) => l[i]!.length)));
  return [
    ...table.map((l) =>
      l
        .map((cell, i) => (i === 0 || i === 4 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join("  ")
        .trimEnd(),
    ),
    "",
    `verdict: ${c.verdict}${c.outcome.kind === "inconclusive" ? ` — INCONCLUSIVE (exit 75): ${c.outcome.reasons.join("; ")}` : ""}`,
    "  order: edgeload, k6, k6, edgeload — a target that warms or drifts between runs cancels out of the mean difference;",
    "  the target's A/A spread is how far the same tool read it apart in its two runs.",
    ...(c.notes.length ? ["notes:", ...c.notes.map((n) => `  ${n}`)] : []),
  ].join("\n");
}
