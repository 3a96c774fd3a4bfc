/** The flags of the commands that list, show and stop runs, and open them in a browser. */
import type { CommandSpec } from "../option-table.ts";
import { CONNECTION, LIST_FORMAT } from "./shared-options.ts";

export const RUNS_COMMAND = {
  name: "runs",
  summary: "the latest runs: id, name, status, start",
  usage: ["runs [--limit 20] [--format table|json]"],
  positionals: false,
  options: [{ name: "limit", type: "string", value: "N", default: "20", description: "how many runs, newest first" }, LIST_FORMAT, ...CONNECTION],
} as const satisfies CommandSpec;

export const SEEDS_COMMAND = {
  name: "seeds",
  summary: "the stored seed sets",
  usage: ["seeds [--format table|json]"],
  positionals: false,
  options: [LIST_FORMAT, ...CONNECTION],
} as const satisfies CommandSpec;

export const STATUS_COMMAND = {
  name: "status",
  summary: "a run's status and live figures",
  usage: ["status <run> [--format table|json]"],
  positionals: true,
  options: [LIST_FORMAT, ...CONNECTION],
} as const satisfies CommandSpec;

export const SUMMARY_COMMAND = {
  name: "summary",
  summary: "a run's end-of-test summary, as `edgeload run` prints it",
  usage: ["summary <run>"],
  positionals: true,
  options: [...CONNECTION],
} as const satisfies CommandSpec;

export const ABORT_COMMAND = {
  name: "abort",
  summary: "stop a run (it ends as aborted, exit 105 for whoever follows it)",
  usage: ["abort <run>"],
  positionals: true,
  options: [...CONNECTION],
} as const satisfies CommandSpec;

const CONTROL_DETAILS = [
  "For a run whose executor is externally-controlled (k6's `scale`, `pause` and `resume`); any other run, one not running yet and an ended one are refused with the reason (exit 104). The coordinator keeps the level and tells every shard at once.",
];

export const SCALE_COMMAND = {
  name: "scale",
  summary: "set how many VUs an externally-controlled run has active (at most its maxVUs), as `k6 scale`",
  usage: ["scale <run> --vus N"],
  details: [
    ...CONTROL_DETAILS,
    "A scale-up starts its VUs within a second; a VU a scale-down leaves out finishes its iteration and starts no other (k6 cuts that iteration instead).",
  ],
  positionals: true,
  options: [{ name: "vus", type: "string", value: "N", description: "the VUs to run, from 0 to the run's maxVUs" }, ...CONNECTION],
} as const satisfies CommandSpec;

export const PAUSE_COMMAND = {
  name: "pause",
  summary: "pause an externally-controlled run: no iteration starts, those in progress finish, as `k6 pause`",
  usage: ["pause <run>"],
  details: [...CONTROL_DETAILS, "Its duration goes on while it is paused (k6 stops its clock instead)."],
  positionals: true,
  options: [...CONNECTION],
} as const satisfies CommandSpec;

export const RESUME_COMMAND = {
  name: "resume",
  summary: "resume a paused externally-controlled run at its VUs, as `k6 resume`",
  usage: ["resume <run>"],
  details: CONTROL_DETAILS,
  positionals: true,
  options: [...CONNECTION],
} as const satisfies CommandSpec;

export const DASHBOARD_COMMAND = {
  name: "dashboard",
  summary: "a single-use link that opens one dashboard page: a run's, a schedule's, two runs compared, or the runs list",
  usage: ["dashboard [run] [--can-abort]", "dashboard --schedule <id>", "dashboard --compare <baseline> <candidate>"],
  details: [
    "The link opens once, within 10 minutes, and signs that browser in to that page for 12 hours: the page and the data it reads, nothing else. Anyone who reads the link before it is opened can open it instead, so send it only where the token itself could go.",
  ],
  positionals: true,
  options: [
    ...CONNECTION,
    { name: "schedule", type: "string", description: "a schedule's trend page instead of a run's" },
    { name: "compare", type: "boolean", description: "two runs' charts laid over each other: give the baseline and the candidate" },
    { name: "can-abort", type: "boolean", description: "the run page's Abort button works (needs the API token, not the read token)" },
  ],
} as const satisfies CommandSpec;

export const REPORT_COMMAND = {
  name: "report",
  summary: "a run's report as Markdown and HTML with SVG charts, indexed in INDEX.md",
  usage: ["report <run> [--out reports/<run>] [--local] [--cf-analytics FILE]"],
  details: [
    "Made from the API that is named (--url/--token, EDGELOAD_URL/EDGELOAD_TOKEN, or a running `edgeload dev`); when it fails nothing is written (exit 104 for --url without a token, 1 for an API that does not answer). With --local, or no API named at all, made from the local state's results database.",
    "Its Delivery section sets what the run sent against what the local stack's target counted, or says why not: not checked for any other target; when that target's ledger cannot be read, the report is written saying so and the command exits 1.",
  ],
  positionals: true,
  options: [
    { name: "out", type: "string", value: "DIR", description: "the report's folder (default reports/<run>)" },
    { name: "local", type: "boolean", description: "read .edgeload/state directly, not the API" },
    { name: "cf-analytics", type: "string", value: "FILE", description: "add Cloudflare's view: the JSON of `edgeload cf-analytics <run> --format json`" },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;
