/**
 * A crosscheck as text (crosscheck.ts decides it): the side-by-side table with a verdict per
 * row, then the verdict, the rules used and why, and the notes.
 */
import { ROW_LABELS, type Crosscheck, type CrosscheckRow } from "./crosscheck.ts";

/** A row's figure in its unit, signed for differences. */
export function formatRowValue(value: number | null, unit: CrosscheckRow["unit"], signed = false): string {
  if (value === null) return "-";
  const sign = signed && value > 0 ? "+" : "";
  switch (unit) {
    case "requests":
      return `${sign}${Math.round(value)}`;
    case "/s":
      return `${sign}${value.toFixed(1)}/s`;
    case "ratio":
      return `${sign}${(100 * value).toFixed(2)}%`;
    case "ms":
      return `${sign}${value.toFixed(2)} ms`;
  }
}

/** The side-by-side table with a verdict per row, then the rules used and why. */
export function renderCrosscheck(c: Crosscheck): string {
  const header = ["", "edgeload", "k6", "Δ (edge − k6)", "tolerance", "verdict"];
  const lines = c.rows.map((r) => [
    `${r.step === null ? "" : `${r.step}: `}${ROW_LABELS[r.metric]}`,
    formatRowValue(r.edge, r.unit),
    formatRowValue(r.k6, r.unit),
    formatRowValue(r.difference, r.unit, true),
    r.tolerance === null ? "-" : `±${formatRowValue(r.tolerance, r.unit)} ${r.rule}`,
    r.verdict,
  ]);
  const table = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...table.map((l) => l[i]!.length)));
  const text = table.map((l) =>
    l
      .map((cell, i) => (i === 0 || i >= 4 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
  const disagree = c.rows.filter((r) => r.verdict === "disagree").length;
  return [
    ...text,
    "",
    `verdict: ${c.verdict}${disagree ? ` (${disagree} of ${c.rows.filter((r) => r.verdict !== "n/a").length} rows outside their tolerance)` : ""}`,
    ...(c.outcome?.kind === "inconclusive" ? ["INCONCLUSIVE (exit 75):", ...c.outcome.reasons.map((r) => `  - ${r}`)] : []),
    "tolerances:",
    ...c.rules.map((r) => `  ${r.rule}: ${r.reason}`),
    ...(c.notes.length ? ["notes:", ...c.notes.map((n) => `  ${n}`)] : []),
  ].join("\n");
}
