/**
 * A report as a list of blocks (headings, paragraphs, lists, tables, charts), written out
 * as GitHub-flavoured markdown or as one self-contained HTML page. Building the report once
 * and writing it twice keeps the two forms identical in content.
 *
 * Text is plain: the writers escape it for their format. A table cell or list item may be
 * `{code: "…"}` for metric names and threshold expressions.
 */

export type Inline = string | { readonly code: string };
/** A table cell: one inline or several in a row. */
export type Cell = Inline | readonly Inline[];

export type Block =
  | { readonly kind: "heading"; readonly level: 1 | 2 | 3; readonly text: string }
  | { readonly kind: "paragraph"; readonly text: readonly Inline[] }
  | { readonly kind: "list"; readonly items: readonly (readonly Inline[])[] }
  | { readonly kind: "table"; readonly columns: readonly string[]; readonly rows: readonly (readonly Cell[])[]; readonly numeric?: readonly boolean[] }
  | { readonly kind: "chart"; readonly file: string; readonly title: string };

/** GFM markdown; charts become image links to `file` (written next to the markdown). */
export function toMarkdown(blocks: readonly Block[]): string {
  const out: string[] = [];
  for (const b of blocks) {
    switch (b.kind) {
      case "heading":
        out.push(`${"#".repeat(b.level)} ${mdText(b.text)}`);
        break;
      case "paragraph":
        out.push(b.text.map(mdInline).join(""));
        break;
      case "list":
        out.push(b.items.map((item) => `- ${item.map(mdInline).join("")}`).join("\n"));
        break;
      case "chart":
        out.push(`![${mdText(b.title)}](${b.file})`);
        break;
      case "table": {
        const row = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
        out.push(
          [row(b.columns.map(mdText)), row(b.columns.map((_, i) => (b.numeric?.[i] ? "---:" : "---"))), ...b.rows.map((cells) => row(cells.map(mdCell)))].join(
            "\n",
          ),
        );
        break;
      }
    }
  }
  return out.join("\n\n") + "\n";
}

/** A standalone HTML page; charts are inlined from `charts` (file name → SVG document). */
export function toHtml(blocks: readonly Block[], title: string, charts: Readonly<Record<string, string>>): string {
  const body = blocks.map((b) => {
    switch (b.kind) {
      case "heading":
        return `<h${b.level}>${htmlText(b.text)}</h${b.level}>`;
      case "paragraph":
        return `<p>${b.text.map(htmlInline).join("")}</p>`;
      case "list":
        return `<ul>${b.items.map((item) => `<li>${item.map(htmlInline).join("")}</li>`).join("")}</ul>`;
      case "chart":
        return `<figure>${charts[b.file] ?? ""}<figcaption>${htmlText(b.title)}</figcaption></figure>`;
      case "table": {
        const cls = (i: number) => (b.numeric?.[i] ? ' class="num"' : "");
        const head = `<tr>${b.columns.map((c, i) => `<th${cls(i)}>${htmlText(c)}</th>`).join("")}</tr>`;
        const rows = b.rows.map((cells) => `<tr>${cells.map((c, i) => `<td${cls(i)}>${cellParts(c).map(htmlInline).join("")}</td>`).join("")}</tr>`).join("\n");
        return `<table>\n<thead>${head}</thead>\n<tbody>\n${rows}\n</tbody>\n</table>`;
      }
    }
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${htmlText(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body.join("\n")}
</body>
</html>
`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1f2328}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}
th{background:#f6f8fa}.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:13px ui-monospace,monospace;background:#f6f8fa;padding:.1rem .3rem;border-radius:4px}
figure{margin:1.5rem 0}svg{max-width:100%;height:auto}figcaption{color:#59636e;font-size:13px}`;

/** Backslash-escapes the ASCII punctuation markdown would read as syntax (CommonMark §2.4). */
function mdText(s: string): string {
  return s.replace(/[\\`*_[\]<>#|]/g, "\\$&").replace(/\n/g, " ");
}

function mdInline(i: Inline): string {
  if (typeof i === "string") return mdText(i);
  // A code span needs a backtick fence longer than any run of backticks inside it.
  const longest = Math.max(0, ...(i.code.match(/`+/g) ?? []).map((m) => m.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${longest ? " " : ""}${i.code}${longest ? " " : ""}${fence}`;
}

/** In a GFM table a pipe ends the cell even inside a code span, so code spans escape it too. */
function mdCell(c: Cell): string {
  return cellParts(c)
    .map((i) => (typeof i === "string" ? mdText(i) : mdInline({ code: i.code.replace(/\|/g, "\\|") })))
    .join("");
}

function cellParts(c: Cell): readonly Inline[] {
  return typeof c === "string" || !Array.isArray(c) ? [c as Inline] : c;
}

function htmlText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function htmlInline(i: Inline): string {
  return typeof i === "string" ? htmlText(i) : `<code>${htmlText(i.code)}</code>`;
}
