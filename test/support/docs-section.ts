/**
 * A generated table kept in a doc between two marker comments: read to compare with what a
 * test's run gives, and rewritten by the generator after the run. One place for both corpora
 * (test/support/k6-corpus/docs-table.ts, test/support/k6-browser-corpus/docs-table.ts).
 */

export interface Markers {
  readonly start: string;
  readonly end: string;
}

/** The text between the markers, trimmed; null when the doc has no such section. */
export function markedSection(doc: string, { start, end }: Markers): string | null {
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  return from < 0 || to < from ? null : doc.slice(from + start.length, to).trim();
}

/** The doc with the section between the markers replaced by `body`; throws naming the markers when it has none. */
export function withMarkedSection(doc: string, { start, end }: Markers, body: string, docName: string): string {
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${docName} has no ${start} … ${end} section to fill`);
  return `${doc.slice(0, from)}${start}\n${body}\n${end}${doc.slice(to + end.length)}`;
}
