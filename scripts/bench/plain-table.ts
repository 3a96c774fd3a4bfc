/**
 * A plain-text table for the benches' terminal output: the first column (the row's name)
 * left-aligned, every other column right-aligned, each row indented two spaces. The
 * figures meant for the README use markdown-table.ts instead.
 */
export function plainTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => "  " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("   ")).join("\n");
}
