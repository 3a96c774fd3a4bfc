/**
 * Every `edgeload` command, in the order the global usage and docs/cli.md list them.
 */
import type { CommandSpec } from "../option-table.ts";
import { CF_ANALYTICS_COMMAND, COMPARE_COMMAND, CROSSCHECK_COMMAND, LADDER_COMMAND, QUERY_COMMAND } from "./analysis-tables.ts";
import {
  ABORT_COMMAND,
  DASHBOARD_COMMAND,
  PAUSE_COMMAND,
  REPORT_COMMAND,
  RESUME_COMMAND,
  RUNS_COMMAND,
  SCALE_COMMAND,
  SEEDS_COMMAND,
  STATUS_COMMAND,
  SUMMARY_COMMAND,
} from "./results-tables.ts";
import { RUN_COMMAND } from "./run-table.ts";
import { SCHEDULE_COMMAND } from "./schedule-table.ts";
import { DEMO_COMMAND, DEPLOY_COMMAND, DEV_COMMAND, PLAN_COMMAND, SEED_COMMAND } from "./stack-tables.ts";
import { VERIFY_COMMAND } from "./verify-table.ts";

export const HELP_COMMAND = {
  name: "help",
  summary: "this overview, or a command's flags",
  usage: ["help [command]", "help --markdown                  the reference of every command (docs/cli.md)"],
  positionals: true,
  options: [{ name: "markdown", type: "boolean", description: "print docs/cli.md: every command, flag and exit code" }],
} as const satisfies CommandSpec;

export const VERSION_COMMAND = {
  name: "version",
  summary: "edgeload's version (also --version)",
  usage: ["version"],
  positionals: false,
  options: [],
} as const satisfies CommandSpec;

/** The commands, grouped as the overview shows them. */
export const COMMAND_GROUPS: ReadonlyArray<{ readonly title: string; readonly commands: readonly CommandSpec[] }> = [
  { title: "Run load", commands: [RUN_COMMAND, DEV_COMMAND, DEMO_COMMAND, SEED_COMMAND, LADDER_COMMAND] },
  {
    title: "Follow and inspect runs",
    commands: [RUNS_COMMAND, STATUS_COMMAND, SUMMARY_COMMAND, ABORT_COMMAND, SCALE_COMMAND, PAUSE_COMMAND, RESUME_COMMAND, DASHBOARD_COMMAND, SEEDS_COMMAND],
  },
  { title: "Analyse", commands: [REPORT_COMMAND, QUERY_COMMAND, COMPARE_COMMAND, CROSSCHECK_COMMAND, CF_ANALYTICS_COMMAND, SCHEDULE_COMMAND] },
  { title: "Deploy", commands: [PLAN_COMMAND, DEPLOY_COMMAND, VERIFY_COMMAND] },
  { title: "This tool", commands: [HELP_COMMAND, VERSION_COMMAND] },
];

export const COMMANDS: readonly CommandSpec[] = COMMAND_GROUPS.flatMap((g) => g.commands);

export function commandNamed(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
