/**
 * What every CLI command shares: the error that carries an exit code (exit-codes.ts), and
 * finding the API to talk to (--url/--token, EDGELOAD_URL/EDGELOAD_TOKEN, or a running
 * `edgeload dev` recorded in .edgeload/dev.json). A named API is the one used: when it
 * lacks its token or cannot be reached the command fails, it never falls back to another.
 */
import { readFile } from "node:fs/promises";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { EdgeloadClient } from "./client.ts";
import { EXIT } from "./exit-codes.ts";

export { EXIT } from "./exit-codes.ts";

/** A failure to report in one line, with the exit code to leave with. */
export class CliError extends Error {
  readonly code: number;
  constructor(message: string, code: number = EXIT.failure) {
    super(message);
    this.code = code;
  }
}

export const CONNECTION_OPTIONS = { url: { type: "string" }, token: { type: "string" } } as const;

export async function connect(values: { url?: string | undefined; token?: string | undefined }): Promise<EdgeloadClient> {
  const url = values.url ?? process.env.EDGELOAD_URL;
  const token = values.token ?? process.env.EDGELOAD_TOKEN;
  if (url) {
    // A named API without its token is a flag missing, not a reason to talk to another one.
    const named = values.url === undefined ? `EDGELOAD_URL (${url})` : `--url ${url}`;
    if (!token) throw new CliError(`--token (or EDGELOAD_TOKEN) is required with ${named}`, EXIT.invalidConfig);
    return new EdgeloadClient(url, token);
  }
  const dev = await (await import("./dev-file.ts")).readDevFile();
  if (!dev) throw new CliError("no edgeload to talk to: start `edgeload dev` in another terminal, or pass --url and --token");
  return new EdgeloadClient(dev.apiUrl, dev.token);
}

/**
 * The API for a command that can also read the local state instead (`query`, `report`):
 * null with --local, or when no API is named at all (no --url, no EDGELOAD_URL, no running
 * `edgeload dev`), which is when the local state left by `npm run demo` is what there is.
 * An API that is named is used or fails: never quietly swapped for the local state
 * (named-api.test.ts).
 */
export async function connectUnlessLocal(values: {
  url?: string | undefined;
  token?: string | undefined;
  local?: boolean | undefined;
}): Promise<EdgeloadClient | null> {
  if (values.local) {
    if (values.url !== undefined) throw new CliError(`--local reads .edgeload/state, --url names an API (${values.url}): pass one of them`, EXIT.invalidConfig);
    return null;
  }
  if (values.url ?? process.env.EDGELOAD_URL) return connect(values);
  const dev = await (await import("./dev-file.ts")).readDevFile();
  return dev ? new EdgeloadClient(dev.apiUrl, dev.token) : null;
}

/** node:util's parseArgs, with an unknown or malformed flag reported as invalid config (exit 104). */
export function parseCliArgs<T extends ParseArgsConfig>(config: T, usage?: string): ReturnType<typeof parseArgs<T>> {
  try {
    const args = attachDashedValues(config.args ?? process.argv.slice(2), config.options ?? {});
    return parseArgs({ ...config, args }) as ReturnType<typeof parseArgs<T>>;
  } catch (error) {
    throw new CliError(usage ? `${(error as Error).message}\n${usage}` : (error as Error).message, EXIT.invalidConfig);
  }
}

/**
 * `--admin-secret -Xy…` as `--admin-secret=-Xy…`. parseArgs refuses a value that starts with
 * a dash as ambiguous, but secrets and tokens (base64url) start with one 1 time in 64. An
 * option that takes a value takes the next argument, unless that argument is itself one of
 * the command's options: then the value was forgotten and parseArgs still says so.
 */
export function attachDashedValues(args: readonly string[], options: NonNullable<ParseArgsConfig["options"]>): string[] {
  // The long name of the option `flag` names (`--name` or `-s`), if the command has it.
  const optionOf = (flag: string): string | undefined => {
    const long = /^--([^=]+)$/.exec(flag)?.[1];
    if (long !== undefined) return long in options ? long : undefined;
    return Object.entries(options).find(([, o]) => o.short !== undefined && flag === `-${o.short}`)?.[0];
  };
  const isOption = (arg: string) => optionOf(arg.split("=")[0]!) !== undefined;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    const name = optionOf(arg);
    const next = args[i + 1];
    if (name !== undefined && options[name]!.type === "string" && next?.startsWith("-") && next !== "--" && !isOption(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}

/**
 * A JSON file the user named, or an invalid-config error saying which file (`what`) could
 * not be read or parsed, with `hint` on how to make a good one.
 */
export async function readJsonFile(path: string, what: string, hint = ""): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new CliError(`file not found: ${path}`, EXIT.invalidConfig);
    throw new CliError(`cannot read ${what} ${path}: ${code ?? String(error)}`, EXIT.invalidConfig);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${what} ${path} is not valid JSON (${(error as Error).message})${hint ? `: ${hint}` : ""}`, EXIT.invalidConfig);
  }
}
