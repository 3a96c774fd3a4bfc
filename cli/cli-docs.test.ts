/**
 * One source for every flag: docs/cli.md is what the option tables generate, `--help` of
 * every command lists every flag its parser accepts, and the commands that parse their own
 * flags (plan, deploy) accept exactly what their tables say.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./help.ts";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";
import { parseArgsOptions, wantsHelp, type CommandSpec } from "./option-table.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { COMMANDS } from "./tables/commands.ts";

const DOCS = join(PROJECT_ROOT, "docs/cli.md");

/** `edgeload <argv>` in this process: its exit code and what it printed. */
const edgeload = edgeloadInProcess();

/** docs/cli.md's section of one command: from its heading to the next. */
function docsSection(docs: string, name: string): string {
  const start = docs.indexOf(`\n## ${name}\n`);
  const end = docs.indexOf("\n## ", start + 1);
  return docs.slice(start, end === -1 ? undefined : end);
}

describe("docs/cli.md", () => {
  it("is what the option tables generate (regenerate with `npm run docs:cli`)", () => {
    expect(readFileSync(DOCS, "utf8")).toBe(renderMarkdown());
  });

  it("prints every exit code", () => {
    const docs = readFileSync(DOCS, "utf8");
    for (const code of [0, 1, 77, 99, 103, 104, 105]) expect(docs).toMatch(new RegExp(`^\\| ${code} \\| `, "m"));
  });
});

describe.each(COMMANDS.map((c) => [c.name, c] as const))("edgeload %s", (name, command) => {
  it("--help and -h exit 0 and list every flag the parser accepts, as docs/cli.md does", async () => {
    const docs = docsSection(readFileSync(DOCS, "utf8"), name);
    for (const flag of ["--help", "-h"]) {
      const { code, stdout } = await edgeload(name, flag);
      expect(code).toBe(0);
      expect(stdout).toContain(`edgeload ${name}:`);
      for (const [long, option] of Object.entries(parseArgsOptions(command.options))) {
        expect(stdout).toContain(option.short ? `-${option.short}, --${long}` : `--${long}`);
        expect(docs).toContain(option.short ? `\`-${option.short}\`, \`--${long}\`` : `\`--${long}\``);
      }
    }
  });

  it("refuses a flag that is not in its table with exit 104", async () => {
    const { code, stderr } = await edgeload(name, "--no-such-flag");
    expect(code).toBe(104);
    expect(stderr).toContain("Unknown option '--no-such-flag'");
  });
});

describe("the commands that parse their own flags", () => {
  /**
   * plan-command.ts and deploy-command.ts are kept by another change and still build their
   * parseArgs options inline: their source is read for the option names, so a flag added
   * there without its table entry (or the reverse) fails here. main.ts checks their
   * arguments against the tables first, so nothing outside a table is accepted either way.
   */
  it.each(COMMANDS.filter((c) => c.external).map((c) => [c.name, c] as const))("%s accepts exactly its table's flags", (name, command: CommandSpec) => {
    const source = readFileSync(join(PROJECT_ROOT, `cli/${name}-command.ts`), "utf8");
    const block = /options:\s*\{([\s\S]*?)\}\s*\}/.exec(source.slice(source.indexOf("parseCliArgs(")))?.[1] ?? "";
    const own = [...block.matchAll(/"?([a-z][\w-]*)"?:\s*\{\s*type:/g)].map((m) => m[1]).sort();
    expect(own).toEqual(command.options.map((o) => o.name).sort());
  });
});

describe("the overview and the version", () => {
  it.each([[[]], [["help"]], [["--help"]], [["-h"]]])("edgeload %j lists every command and exits 0", async (argv) => {
    const { code, stdout } = await edgeload(...argv);
    expect(code).toBe(0);
    for (const c of COMMANDS) expect(stdout).toMatch(new RegExp(`^ {2}${c.name} +\\S`, "m"));
    expect(stdout).toContain("`edgeload <command> --help`");
  });

  it.each([[["--version"]], [["version"]]])("edgeload %j prints package.json's version", async (argv) => {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    expect(await edgeload(...argv)).toMatchObject({ code: 0, stdout: `edgeload ${version}` });
  });

  it("says an unknown command is one, with exit 104", async () => {
    const { code, stderr } = await edgeload("frob");
    expect(code).toBe(104);
    expect(stderr).toContain('unknown command "frob"');
  });
});

describe("wantsHelp reads the table", () => {
  const run = COMMANDS.find((c) => c.name === "run")!;
  it.each<[string[], boolean]>([
    // -h after a flag that wants a value is that value (parseArgs then asks for --body=-h).
    [["--body", "-h"], false],
    [["--body=x", "-h"], true],
    [["spec.json", "--help"], true],
    // After --, nothing is a flag.
    [["--", "-h"], false],
  ])("%j → %s", (args, expected) => {
    expect(wantsHelp(run, args)).toBe(expected);
  });
});
