/**
 * Help text and docs/cli.md, both rendered from the option tables (tables/), so that what
 * `edgeload <command> --help` says, what docs/cli.md says and what the parser accepts are
 * one thing. cli-docs.test.ts regenerates docs/cli.md and fails when the file differs.
 */
import { EXIT_CODES } from "./exit-codes.ts";
import { HELP_OPTION, RUN_KIND_LABEL, type CommandSpec, type OptionSpec } from "./option-table.ts";
import { COMMAND_GROUPS, COMMANDS } from "./tables/commands.ts";

const WIDTH = 100;
const CONNECTION_NOTE = "The API is found from --url/--token, EDGELOAD_URL/EDGELOAD_TOKEN, or a running `edgeload dev`.";
const KINDS_NOTE = "[…] after a flag: the only runs it applies to; it is refused on any other.";

/** The overview: every command in a line, and where to read more. */
export function renderGlobalUsage(version: string): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  const lines = [`edgeload ${version}: serverless distributed load testing on Cloudflare`, "", "usage: edgeload <command> [flags]"];
  for (const group of COMMAND_GROUPS) {
    lines.push("", `${group.title}:`);
    for (const c of group.commands) lines.push(`  ${c.name.padEnd(width)}${c.summary}`);
  }
  lines.push(
    "",
    "`edgeload <command> --help` lists a command's flags; `edgeload help --markdown` all of them (docs/cli.md).",
    CONNECTION_NOTE,
    `exit codes: ${EXIT_CODES.map((e) => `${e.code} ${e.name}`).join(", ")} (docs/cli.md says when).`,
  );
  return lines.join("\n");
}

/** `edgeload <command> --help`. */
export function renderCommandHelp(command: CommandSpec): string {
  const lines = [`edgeload ${command.name}: ${command.summary}`, "", "usage:", ...command.usage.map((u) => `  edgeload ${u}`)];
  for (const paragraph of command.details ?? []) lines.push("", ...wrap(paragraph, WIDTH, ""));
  const options = [...command.options, HELP_OPTION];
  const column = Math.min(34, Math.max(...options.map((o) => flagText(o).length)) + 4);
  for (const [group, members] of groups(options)) {
    // A group whose flags all apply to the same runs says so once, in its heading.
    const shared = members.every((o) => o.kinds && JSON.stringify(o.kinds) === JSON.stringify(members[0]!.kinds)) ? kindsText(members[0]!) : "";
    lines.push("", `${group ?? "Flags"}${shared}:`);
    for (const o of members) {
      const text = `  ${flagText(o)}`.padEnd(column);
      const description = `${o.description}${o.multiple ? " (repeatable)" : ""}${o.default !== undefined ? ` (default ${o.default})` : ""}${shared ? "" : kindsText(o)}`;
      const wrapped = wrap(description, WIDTH - column, " ".repeat(column));
      lines.push(text.length > column ? text : text + wrapped[0]!.trimStart(), ...(text.length > column ? wrapped : wrapped.slice(1)));
    }
  }
  if (command.options.some((o) => o.kinds)) lines.push("", KINDS_NOTE);
  if (command.options.some((o) => o.name === "url")) lines.push(CONNECTION_NOTE);
  return lines.join("\n");
}

/** docs/cli.md: the overview, the exit codes, then every command with its flags in tables. */
export function renderMarkdown(): string {
  const out = [
    "# The edgeload command line",
    "",
    "<!-- Generated from cli/tables/ by `npm run docs:cli`; cli-docs.test.ts fails when this file and the tables differ. Edit the tables, not this file. -->",
    "",
    `\`edgeload <command> --help\` prints a command's part of this page. ${CONNECTION_NOTE}`,
    "",
  ];
  for (const group of COMMAND_GROUPS) {
    out.push(`**${group.title}:** ${group.commands.map((c) => `[\`${c.name}\`](#${c.name})`).join(" · ")}  `);
  }
  out.push("", "## Exit codes", "", "| code | name | when | as in |", "| --- | --- | --- | --- |");
  for (const e of EXIT_CODES) out.push(`| ${e.code} | ${e.name} | ${cell(e.meaning)} | ${cell(e.source)} |`);
  for (const command of COMMANDS) {
    out.push("", `## ${command.name}`, "", `${capitalised(command.summary)}.`, "", "```", ...command.usage.map((u) => `edgeload ${u}`), "```");
    for (const paragraph of command.details ?? []) out.push("", paragraph);
    const options = [...command.options, HELP_OPTION];
    const withKinds = command.options.some((o) => o.kinds);
    for (const [group, members] of groups(options)) {
      out.push("", ...(group ? [`**${group}**`, ""] : []));
      out.push(withKinds ? "| flag | value | repeatable | applies to | description |" : "| flag | value | repeatable | description |");
      out.push(withKinds ? "| --- | --- | --- | --- | --- |" : "| --- | --- | --- | --- |");
      for (const o of members) {
        const flag = `${o.short ? `\`-${o.short}\`, ` : ""}\`--${o.name}\``;
        const value = o.type === "boolean" ? "" : `\`${cell(o.value ?? "VALUE")}\``;
        const description = `${cell(o.description)}${o.default !== undefined ? ` (default \`${cell(o.default)}\`)` : ""}`;
        const kinds = o.kinds ? o.kinds.map((k) => cell(RUN_KIND_LABEL[k])).join(", ") : "every run";
        out.push(`| ${flag} | ${value} | ${o.multiple ? "yes" : ""} |${withKinds ? ` ${kinds} |` : ""} ${description} |`);
      }
    }
  }
  return out.join("\n") + "\n";
}

function flagText(o: OptionSpec): string {
  const names = `${o.short ? `-${o.short}, ` : "    "}--${o.name}`;
  return o.type === "boolean" ? names : `${names} ${o.value ?? "VALUE"}`;
}

function kindsText(o: OptionSpec): string {
  return o.kinds ? ` [${o.kinds.map((k) => RUN_KIND_LABEL[k]).join(", ")}]` : "";
}

/** Options by their group, in the order the groups first appear. */
function groups(options: readonly OptionSpec[]): Array<[string | undefined, OptionSpec[]]> {
  const byGroup = new Map<string | undefined, OptionSpec[]>();
  for (const o of options) {
    const group = "group" in o ? o.group : undefined;
    byGroup.set(group, [...(byGroup.get(group) ?? []), o]);
  }
  return [...byGroup.entries()];
}

function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(indent + line);
  return lines;
}

/** A markdown table cell: pipes escaped (GFM), so `table|json` stays in its column. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
