/** Options several commands share, written once so that they read the same everywhere. */
import type { OptionSpec } from "../option-table.ts";

/** Where the API is: without them, EDGELOAD_URL/EDGELOAD_TOKEN or a running `edgeload dev`. */
export const CONNECTION = [
  { name: "url", type: "string", value: "URL", description: "the edgeload API (default: EDGELOAD_URL, else a running `edgeload dev`)", group: "Connection" },
  { name: "token", type: "string", value: "TOKEN", description: "its API token (default: EDGELOAD_TOKEN)", group: "Connection" },
] as const satisfies readonly OptionSpec[];

/** `--format` of the list commands: a table on a terminal, JSON when piped. */
export const LIST_FORMAT = {
  name: "format",
  type: "string",
  value: "table|json",
  description: "output format (default: table on a terminal, json when piped)",
} as const satisfies OptionSpec;

/** `--format` of commands whose default is the table whatever stdout is. */
export const TABLE_OR_JSON = {
  name: "format",
  type: "string",
  value: "table|json",
  default: "table",
  description: "output format",
} as const satisfies OptionSpec;
