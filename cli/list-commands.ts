/**
 * The small commands about runs already made: `runs`, `seeds`, `status <run>`,
 * `summary <run>`, `abort <run>` and `dashboard [run]`. Each asks the API one thing and
 * prints it (list-format.ts for the tables).
 */
import type { RunView } from "../core/run/protocol.ts";
import { renderSummary } from "../core/run/summary-text.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import type { DashboardView } from "./client.ts";
import { listFormat, renderRuns, renderSeeds, renderStatus, type RunRow, type SeedRow } from "./list-format.ts";
import { parseCommand, type CommandSpec } from "./option-table.ts";
import { ABORT_COMMAND, DASHBOARD_COMMAND, RUNS_COMMAND, SEEDS_COMMAND, STATUS_COMMAND, SUMMARY_COMMAND } from "./tables/results-tables.ts";

const tty = () => process.stdout.isTTY === true;
const json = (value: unknown) => console.log(JSON.stringify(value, null, 2));

export async function runsCommand(args: readonly string[]): Promise<number> {
  const { values } = parseCommand(RUNS_COMMAND, args);
  const format = listFormat(values.format, tty());
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new CliError(`--limit: "${values.limit}" must be a whole number from 1 to 200`, EXIT.invalidConfig);
  const answer = await (await connect(values)).listRuns(limit);
  if (format === "json") json(answer);
  else console.log(renderRuns(answer.runs as unknown as RunRow[]));
  return EXIT.ok;
}

export async function seedsCommand(args: readonly string[]): Promise<number> {
  const { values } = parseCommand(SEEDS_COMMAND, args);
  const format = listFormat(values.format, tty());
  const answer = await (await connect(values)).listSeeds();
  if (format === "json") json(answer);
  else console.log(renderSeeds(answer.seeds as unknown as SeedRow[]));
  return EXIT.ok;
}

export async function statusCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(STATUS_COMMAND, args);
  const format = listFormat(values.format, tty());
  const view: RunView = await (await connect(values)).getRun(runId(STATUS_COMMAND, positionals));
  if (format === "json") json(view);
  else console.log(renderStatus(view));
  return EXIT.ok;
}

export async function summaryCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(SUMMARY_COMMAND, args);
  console.log(renderSummary(await (await connect(values)).summary(runId(SUMMARY_COMMAND, positionals))));
  return EXIT.ok;
}

export async function abortCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(ABORT_COMMAND, args);
  const view = await (await connect(values)).abort(runId(ABORT_COMMAND, positionals));
  console.log(`run ${view.id}: ${view.status}${view.abortReason ? ` (${view.abortReason})` : ""}`);
  return EXIT.ok;
}

export async function dashboardCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(DASHBOARD_COMMAND, args);
  console.log((await (await connect(values)).dashboardLink(dashboardView(values, positionals))).url);
  return EXIT.ok;
}

function dashboardView(values: { schedule?: string; compare?: boolean; "can-abort"?: boolean }, positionals: readonly string[]): DashboardView {
  const wrong = (why: string) => new CliError(`${why} (edgeload dashboard --help)`, EXIT.invalidConfig);
  if (values.compare) {
    if (positionals.length !== 2) throw wrong("--compare takes two runs: the baseline and the candidate");
    return { compare: [positionals[0]!, positionals[1]!] };
  }
  if (values.schedule !== undefined) {
    if (positionals.length) throw wrong(`--schedule opens the schedule's page, not a run's (${positionals.join(" ")})`);
    return { schedule: values.schedule };
  }
  if (positionals.length > 1) throw wrong(`one run at a time, not ${positionals.join(" ")}`);
  if (values["can-abort"] && !positionals[0]) throw wrong("--can-abort is for one run's page: give its id");
  return positionals[0] ? { run: positionals[0], ...(values["can-abort"] ? { abort: true } : {}) } : {};
}

/** The one run id a command takes. */
function runId(command: CommandSpec, positionals: readonly string[]): string {
  if (positionals.length !== 1)
    throw new CliError(
      `${positionals.length ? "one run id" : "a run id"} is required (see \`edgeload runs\`; edgeload ${command.name} --help)`,
      EXIT.invalidConfig,
    );
  return positionals[0]!;
}
