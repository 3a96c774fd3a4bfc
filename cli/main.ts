/**
 * The `edgeload` command line: finds the command, answers `--help` and `--version` from
 * the option tables (tables/, help.ts), runs the command and turns its failure into one
 * line on stderr and an exit code (exit-codes.ts). Each command is its own module.
 *
 *   edgeload                  the overview (exit 0)
 *   edgeload help [command]   the same, or a command's flags; `help --markdown` is docs/cli.md
 *   edgeload <cmd> --help     a command's flags
 *   edgeload --version        the version in package.json
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ApiProblem, ApiUnreachable } from "./client.ts";
import { CliError } from "./connection.ts";
import { EXIT, exitCodeOfApiStatus } from "./exit-codes.ts";
import { renderCommandHelp, renderGlobalUsage, renderMarkdown } from "./help.ts";
import { parseCommand, wantsHelp, type CommandSpec } from "./option-table.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { commandNamed, HELP_COMMAND } from "./tables/commands.ts";

type Handler = (args: readonly string[]) => Promise<number>;

/** Each command's module, loaded only when it runs (wrangler and esbuild are heavy to load). */
const HANDLERS: Readonly<Record<string, Handler>> = {
  run: async (a) => (await import("./run-command.ts")).runCommand(a),
  dev: async (a) => (await import("./dev-command.ts")).devCommand(a),
  demo: async (a) => (await import("./demo-command.ts")).demoCommand(a),
  seed: async (a) => (await import("./seed-command.ts")).seedCommand(a),
  ladder: async (a) => (await import("./ladder-command.ts")).ladderCommand([...a]),
  runs: async (a) => (await import("./list-commands.ts")).runsCommand(a),
  status: async (a) => (await import("./list-commands.ts")).statusCommand(a),
  summary: async (a) => (await import("./list-commands.ts")).summaryCommand(a),
  abort: async (a) => (await import("./list-commands.ts")).abortCommand(a),
  scale: async (a) => (await import("./control-commands.ts")).scaleCommand(a),
  pause: async (a) => (await import("./control-commands.ts")).pauseCommand(a),
  resume: async (a) => (await import("./control-commands.ts")).resumeCommand(a),
  dashboard: async (a) => (await import("./list-commands.ts")).dashboardCommand(a),
  seeds: async (a) => (await import("./list-commands.ts")).seedsCommand(a),
  report: async (a) => (await import("./report-command.ts")).reportCommand([...a]),
  query: async (a) => (await import("./query-command.ts")).queryCommand([...a]),
  compare: async (a) => (await import("./compare-command.ts")).compareCommand([...a]),
  crosscheck: async (a) => (await import("./crosscheck-command.ts")).crosscheckCommand([...a]),
  "cf-analytics": async (a) => (await import("./cf-analytics-command.ts")).cfAnalyticsCommand([...a]),
  schedule: async (a) => (await import("./schedule-command.ts")).scheduleCommand(a),
  plan: async (a) => (await import("./plan-command.ts")).planCommand([...a]),
  deploy: async (a) => (await import("./deploy-command.ts")).deployCommand([...a]),
  verify: async (a) => (await import("./verify-command.ts")).verifyCommand(a),
  help: async (a) => helpCommand(a),
  version: async (a) => {
    parseCommand(commandNamed("version")!, a);
    console.log(`edgeload ${version()}`);
    return EXIT.ok;
  },
};

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === "--help" || name === "-h") return await helpCommand([]);
    if (name === "--version" || name === "-v") return await HANDLERS.version!([]);
    const command = commandNamed(name);
    const handler = HANDLERS[name];
    if (!command || !handler) throw new CliError(`unknown command "${name}": \`edgeload help\` lists them`, EXIT.invalidConfig);
    if (wantsHelp(command, rest)) {
      console.log(renderCommandHelp(command));
      return EXIT.ok;
    }
    // A command that parses its own flags is held to its table first, so it accepts nothing undocumented.
    if (command.external) parseCommand(command, rest);
    return await handler(rest);
  } catch (error) {
    if (error instanceof CliError) {
      console.error(`edgeload: ${error.message}`);
      return error.code;
    }
    if (error instanceof ApiProblem) {
      console.error(`edgeload: ${error.message}`);
      return exitCodeOfApiStatus(error.status, error.body.type);
    }
    if (error instanceof ApiUnreachable) {
      console.error(`edgeload: ${error.message}`);
      return EXIT.failure;
    }
    throw error;
  }
}

/** `edgeload help [command] [--markdown]`. */
function helpCommand(args: readonly string[]): number {
  const { values, positionals } = parseCommand(HELP_COMMAND, args);
  if (values.markdown) {
    process.stdout.write(renderMarkdown());
    return EXIT.ok;
  }
  const topic = positionals[0];
  if (topic === undefined) {
    console.log(renderGlobalUsage(version()));
    return EXIT.ok;
  }
  const command: CommandSpec | undefined = commandNamed(topic);
  if (!command) throw new CliError(`unknown command "${topic}": \`edgeload help\` lists them`, EXIT.invalidConfig);
  console.log(renderCommandHelp(command));
  return EXIT.ok;
}

function version(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }).version;
}
