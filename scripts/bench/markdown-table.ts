/**
 * A Markdown table for benchmark output, padded so it also reads as plain text: numbers
 * right-aligned, the columns named in `left` left-aligned.
 */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>, left: ReadonlySet<number> = new Set()): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (left.has(i) ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}
