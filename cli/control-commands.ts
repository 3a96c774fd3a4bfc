/**
 * `edgeload scale <run> --vus N`, `pause <run>` and `resume <run>`: k6's `scale`, `pause` and
 * `resume` for an externally-controlled run, through PATCH /v1/runs/:id/control. The API
 * judges the change (the run's maxVUs, its executor, whether it runs); a bad flag is refused
 * here first, with exit 104 as any bad input.
 */
import type { ControlAnswer } from "./client.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import { parseCommand, type CommandSpec } from "./option-table.ts";
import { PAUSE_COMMAND, RESUME_COMMAND, SCALE_COMMAND } from "./tables/results-tables.ts";

export async function scaleCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(SCALE_COMMAND, args);
  return change(values, runIdOf(SCALE_COMMAND, positionals), { vus: vusOf(values.vus) });
}

export async function pauseCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(PAUSE_COMMAND, args);
  return change(values, runIdOf(PAUSE_COMMAND, positionals), { paused: true });
}

export async function resumeCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(RESUME_COMMAND, args);
  return change(values, runIdOf(RESUME_COMMAND, positionals), { paused: false });
}

/** `--vus` as a whole number of VUs, 0 or more (the API checks it against the run's maxVUs). */
export function vusOf(given: string | undefined): number {
  if (given === undefined) throw new CliError("--vus is required: how many VUs the run should have active", EXIT.invalidConfig);
  const vus = Number(given);
  if (!/^\d+$/.test(given.trim()) || !Number.isSafeInteger(vus))
    throw new CliError(`--vus: "${given}" must be a whole number of VUs, 0 or more`, EXIT.invalidConfig);
  return vus;
}

async function change(values: { url?: string; token?: string }, id: string, request: { vus?: number; paused?: boolean }): Promise<number> {
  console.log(controlLine(await (await connect(values)).control(id, request)));
  return EXIT.ok;
}

/** One line saying the level the run now has. */
export function controlLine(answer: ControlAnswer): string {
  const state = answer.paused ? `paused (${answer.vus} VUs when resumed)` : `${answer.vus} VUs active`;
  const missed = answer.shards - answer.shardsTold;
  const told = missed === 0 ? "" : `; ${missed} of ${answer.shards} shards not reached yet (told again within seconds)`;
  return `run ${answer.id}: ${state}, at most ${answer.maxVUs}${told}`;
}

function runIdOf(command: CommandSpec, positionals: readonly string[]): string {
  if (positionals.length !== 1) {
    throw new CliError(
      `${positionals.length ? "one run id" : "a run id"} is required (see \`edgeload runs\`; edgeload ${command.name} --help)`,
      EXIT.invalidConfig,
    );
  }
  return positionals[0]!;
}
