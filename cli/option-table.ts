/**
 * One source for every flag: a command is described once, as a table of its options
 * (name, short alias, value, repeatable, description, and for `run` the kinds of run each
 * applies to), and that table drives its parser (node:util parseArgs, through
 * parseCliArgs), its `--help` and docs/cli.md (help.ts). A flag that is not in the table
 * is refused by the parser, so whatever the parser accepts is documented.
 *
 * The tables themselves are in tables/, one file per group of commands.
 */
import type { ParseArgsConfig } from "node:util";
import { parseCliArgs } from "./connection.ts";

/**
 * What `edgeload run` is running, which decides the flags that apply: a spec file, a k6
 * script, the vegeta-like `--target` form, or a built-in `--scenario`.
 */
export const RUN_KINDS = ["spec", "script", "quick", "scenario"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** How a run kind is named in help, docs and refusals. */
export const RUN_KIND_LABEL: { readonly [K in RunKind]: string } = {
  spec: "spec.json",
  script: "script.js",
  quick: "--target form",
  scenario: "--scenario form",
};

export interface OptionSpec {
  /** The long name, without the dashes. */
  readonly name: string;
  /** A one-letter alias (`-d`), k6's where k6 has one. */
  readonly short?: string;
  readonly type: "string" | "boolean";
  /** The value's placeholder in help (`N`, `URL`, `NAME=VALUE`); string options only. */
  readonly value?: string;
  /** Given more than once, every value is kept. */
  readonly multiple?: boolean;
  /** The value when the flag is not given (string options; booleans are false). */
  readonly default?: string;
  readonly description: string;
  /** The kinds of run the flag applies to (`run` only); absent: all of them. */
  readonly kinds?: readonly RunKind[];
  /** The heading it is listed under in help and docs. */
  readonly group?: string;
}

export interface CommandSpec {
  readonly name: string;
  /** One line, for the global usage. */
  readonly summary: string;
  /** Synopsis lines, without the leading `edgeload `. */
  readonly usage: readonly string[];
  /** Paragraphs after the synopsis. */
  readonly details?: readonly string[];
  /** Whether the command takes positional arguments (a run id, a file, a seed kind). */
  readonly positionals: boolean;
  readonly options: readonly OptionSpec[];
  /** The command parses its own flags (a file owned elsewhere): main checks them against this table first. */
  readonly external?: boolean;
}

/** `--help`/`-h`: every command has it, so it is added here rather than in each table. */
export const HELP_OPTION = { name: "help", short: "h", type: "boolean", description: "print this help and exit 0" } as const satisfies OptionSpec;

type ValueOf<O extends OptionSpec> = O["type"] extends "boolean" ? boolean : O["multiple"] extends true ? string[] : string;
type HasValue<O extends OptionSpec> = O extends { type: "boolean" } ? true : O extends { default: string } ? true : false;

/** The parsed values of a table: flags with a default (and booleans) always have one. */
export type OptionValues<Os extends readonly OptionSpec[]> = {
  -readonly [O in Os[number] as HasValue<O> extends true ? O["name"] : never]: ValueOf<O>;
} & {
  -readonly [O in Os[number] as HasValue<O> extends true ? never : O["name"]]?: ValueOf<O>;
};

export interface Parsed<C extends CommandSpec> {
  readonly values: OptionValues<C["options"]>;
  readonly positionals: string[];
  /** The long names of the flags given on the command line (defaults not included). */
  readonly given: ReadonlySet<string>;
}

/** The table as node:util parseArgs options (no defaults: they are applied after, so a given flag can be told from a default). */
export function parseArgsOptions(options: readonly OptionSpec[]): NonNullable<ParseArgsConfig["options"]> {
  return Object.fromEntries(
    [...options, HELP_OPTION].map((o) => [
      o.name,
      {
        type: o.type,
        ...("short" in o && o.short ? { short: o.short } : {}),
        ...("multiple" in o && o.multiple ? { multiple: true } : {}),
      },
    ]),
  );
}

/**
 * Parses `args` by the command's table: unknown flags, missing values and stray positionals
 * are refused with exit 104, naming the command's `--help`.
 */
export function parseCommand<C extends CommandSpec>(command: C, args: readonly string[]): Parsed<C> {
  const hint = `(edgeload ${command.name} --help lists its flags)`;
  const { values, positionals } = parseCliArgs(
    { args: [...args], options: parseArgsOptions(command.options), allowPositionals: command.positionals, strict: true },
    hint,
  );
  const raw = values as Record<string, unknown>;
  const given = new Set(Object.keys(raw).filter((k) => raw[k] !== undefined && k !== "help"));
  const out: Record<string, unknown> = {};
  for (const o of command.options) {
    out[o.name] = raw[o.name] ?? (o.type === "boolean" ? false : o.default);
  }
  return { values: out as OptionValues<C["options"]>, positionals, given };
}

/**
 * Whether the arguments ask for help (`--help` or `-h` as a flag, not as another flag's
 * value), read by the table so that `--body -h` stays a body.
 */
export function wantsHelp(command: CommandSpec, args: readonly string[]): boolean {
  const takesValue = new Set(command.options.filter((o) => o.type === "string").flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]));
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
    if (takesValue.has(arg)) i++;
  }
  return false;
}

/**
 * Every given flag that does not apply to `kind` of run, named with the kinds it applies
 * to: the caller refuses them (exit 104), so a flag is acted on or refused, never dropped.
 */
export function inapplicableFlags(command: CommandSpec, given: ReadonlySet<string>, kind: RunKind): string[] {
  return command.options
    .filter((o) => given.has(o.name) && o.kinds !== undefined && !o.kinds.includes(kind))
    .map((o) => `--${o.name} does not apply to a ${RUN_KIND_LABEL[kind]} run (it applies to: ${o.kinds!.map((k) => RUN_KIND_LABEL[k]).join(", ")})`);
}
