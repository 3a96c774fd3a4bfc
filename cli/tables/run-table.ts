/**
 * `edgeload run`'s flags: k6's names and semantics for what k6 has (load, thresholds,
 * outputs, tags, __ENV), edgeload's own for placement and for the two spec-less forms.
 * `kinds` says which runs a flag applies to; run-command.ts refuses it on any other
 * (option-table.ts refuseInapplicable), and load-overrides.ts refuses a load flag the
 * run's model cannot express, so no flag is ever parsed and dropped.
 */
import type { CommandSpec } from "../option-table.ts";
import { CONNECTION } from "./shared-options.ts";

const LOAD = "Load (k6's flags: they replace the spec's or script's load profile)";
const RUN = "The run";
const OUTPUT = "Thresholds and output";
const QUICK = "The request";
const SCENARIO = "The built-in scenario";

export const RUN_COMMAND = {
  name: "run",
  summary: "start a run from a spec, a k6 script or flags; follow it and print its summary",
  usage: [
    "run <spec.json> [flags]",
    "run <script.js> [flags]                          a k6 script, unmodified",
    "run --target URL (--rate N | --vus N) -d 30s [flags]",
    "run --scenario NAME (--preset rpsN | --rate N -d 30s) [flags]",
    "run --scenario browser-login [--vus N -d 30s | -i N] [flags]",
  ],
  details: [
    "Load flags override the run's own profile as k6's command line overrides a script's options: -d, -i or --stage replace it. A k6 script gets exactly k6's shortcuts (--vus, else the script's vus, else 1). A spec keeps its model: a VU spec gets k6's shortcuts at --vus, else its own vus (or the startVUs of its ramp), else 1; an arrival-rate spec (or preset) a constant or ramping arrival rate at --rate, else its own rate, else its ramp's peak. A spec with named scenarios takes -d only (each scenario held at its level for that long). A flag that cannot apply to what is run is refused (exit 104), never ignored.",
    "Thresholds from --threshold replace the run's own for the same metric. -e and --var are one thing: a script's __ENV, a spec's {{vars.NAME}}.",
  ],
  positionals: true,
  options: [
    {
      name: "vus",
      short: "u",
      type: "string",
      value: "N",
      group: LOAD,
      description: "virtual users: the level of -d, the VUs sharing -i, the start of --stage (VU runs)",
    },
    { name: "duration", short: "d", type: "string", value: "D", group: LOAD, description: 'run for D ("30s", "1m30s") at a constant level' },
    {
      name: "iterations",
      short: "i",
      type: "string",
      value: "N",
      group: LOAD,
      description: "N iterations shared by the VUs, then stop (k6's shared-iterations; VU runs)",
    },
    {
      name: "stage",
      short: "s",
      type: "string",
      value: "D:T",
      multiple: true,
      group: LOAD,
      description: 'a ramp stage, k6\'s "30s:100": T VUs in a VU run, T iterations/s in an arrival-rate run',
    },
    {
      name: "rate",
      type: "string",
      value: "N",
      group: LOAD,
      kinds: ["spec", "quick", "scenario"],
      description: "arrivals per second: the --target form's rate, an arrival-rate spec's constant rate",
    },
    {
      name: "rps",
      type: "string",
      value: "N",
      group: LOAD,
      description: "a k6 script: at most N requests/s, split over its shards (k6's --rps); an arrival-rate spec: its rate capped at N iterations/s",
    },
    {
      name: "max-vus",
      type: "string",
      value: "N",
      group: LOAD,
      kinds: ["spec", "quick", "scenario"],
      description: "most iterations in flight at once (k6's maxVUs; arrival-rate runs)",
    },
    {
      name: "threshold",
      type: "string",
      value: "METRIC=EXPR",
      multiple: true,
      group: OUTPUT,
      description: 'a threshold in k6\'s grammar: "http_req_duration=p(95)<300"',
    },
    { name: "no-thresholds", type: "boolean", group: OUTPUT, description: "leave every threshold out (k6's --no-thresholds)" },
    {
      name: "summary-export",
      type: "string",
      value: "FILE",
      group: OUTPUT,
      description: "write the summary JSON: k6's --summary-export layout plus an edgeload section",
    },
    {
      name: "out",
      short: "o",
      type: "string",
      value: "TYPE=TARGET",
      multiple: true,
      group: OUTPUT,
      description: "json=FILE, opentelemetry=URL or experimental-prometheus-rw=URL (k6's names)",
    },
    { name: "quiet", short: "q", type: "boolean", group: OUTPUT, description: "no progress line (k6's -q)" },
    {
      name: "target",
      type: "string",
      value: "URL",
      group: RUN,
      description: "the --target form's URL (path included); a spec's base URL; a script's target (else -e BASE_URL)",
    },
    { name: "name", type: "string", value: "NAME", group: RUN, description: "the run's name in lists, reports and the dashboard" },
    {
      name: "shards",
      type: "string",
      value: "N",
      group: RUN,
      description: "shards to split the load over (default: as many as the load needs); in a spec or script of one named scenario, that scenario's",
    },
    { name: "regions", type: "string", value: "LIST", group: RUN, description: "location hints, comma-separated (default wnam,enam,weur,apac)" },
    { name: "timeout", type: "string", value: "D", group: RUN, description: "request timeout (default 10s; a k6 script's 60s, as k6)" },
    { name: "tag", type: "string", value: "NAME=VALUE", multiple: true, group: RUN, description: "a tag on the whole run (k6's --tag)" },
    {
      name: "env",
      short: "e",
      type: "string",
      value: "NAME=VALUE",
      multiple: true,
      group: RUN,
      description: "a script's __ENV (k6's -e); in a spec, the same as --var",
    },
    { name: "var", type: "string", value: "NAME=VALUE", multiple: true, group: RUN, description: "a spec's {{vars.NAME}}; in a script, the same as -e" },
    {
      name: "public-env",
      type: "string",
      value: "NAME",
      multiple: true,
      group: RUN,
      kinds: ["script"],
      description: "an __ENV name whose value may be stored and shown with the run; every other -e value is redacted",
    },
    {
      name: "secret",
      type: "string",
      value: "NAME=VALUE",
      multiple: true,
      group: RUN,
      kinds: ["spec", "quick", "scenario"],
      description: "a spec's {{secrets.NAME}}, redacted wherever the run is stored or shown",
    },
    { name: "max-cost", type: "string", value: "USD", group: RUN, description: "refuse the run if its estimated cost is above USD" },
    {
      name: "modules-dir",
      type: "string",
      value: "DIR",
      group: RUN,
      kinds: ["script"],
      description:
        "where a script's https:// imports are read first, laid out as host/path (DIR/jslib.k6.io/k6-utils/1.4.0/index.js), never outside DIR; else the cache (.cache/k6-modules), a copy the script's .modules.json lock pins; else the network",
    },
    {
      name: "allow-http-modules",
      type: "boolean",
      group: RUN,
      kinds: ["script"],
      description:
        "also fetch a script's plain http:// imports (and redirects to http://) from hosts other than 127.0.0.1, ::1 and localhost; refused without it, since anyone on the path can change them",
    },
    {
      name: "include-system-env-vars",
      type: "boolean",
      group: RUN,
      kinds: ["script"],
      description: "put this shell's environment in __ENV too (k6 does by default; __ENV travels with the run)",
    },
    { name: "method", type: "string", value: "METHOD", group: QUICK, kinds: ["quick"], description: "the request's method (default GET)" },
    { name: "header", type: "string", value: '"Name: value"', multiple: true, group: QUICK, kinds: ["quick"], description: "a request header" },
    { name: "body", type: "string", value: "TEXT", group: QUICK, kinds: ["quick"], description: "the request body" },
    {
      name: "scenario",
      type: "string",
      value: "NAME",
      group: SCENARIO,
      kinds: ["scenario"],
      description:
        "a built-in scenario: userinfo, introspect, token-exchange, refresh, silent-auth, otp-login; browser-login (a k6 browser script, its load as a script's)",
    },
    {
      name: "preset",
      type: "string",
      value: "rpsN",
      group: SCENARIO,
      kinds: ["scenario"],
      description: "the scenario's load ladder rung and thresholds (presets/authrim.json)",
    },
    {
      name: "duration-scale",
      type: "string",
      value: "F",
      group: SCENARIO,
      kinds: ["scenario"],
      description: "shorten (or stretch) every stage of the preset by F",
    },
    { name: "seed", type: "string", value: "NAME", group: SCENARIO, kinds: ["scenario"], description: "the seed set the scenario reads (edgeload seeds)" },
    { name: "client-id", type: "string", value: "ID", group: SCENARIO, kinds: ["scenario"], description: "the target's client (default: the local target's)" },
    { name: "client-secret", type: "string", value: "SECRET", group: SCENARIO, kinds: ["scenario"], description: "its secret" },
    { name: "admin-secret", type: "string", value: "SECRET", group: SCENARIO, kinds: ["scenario"], description: "the target's admin API secret" },
    { name: "redirect-uri", type: "string", value: "URI", group: SCENARIO, kinds: ["scenario"], description: "a redirect URI registered for the client" },
    { name: "scope", type: "string", value: "SCOPE", group: SCENARIO, kinds: ["scenario"], description: 'the scope asked for (default "openid profile")' },
    { name: "audience", type: "string", value: "AUD", group: SCENARIO, kinds: ["scenario"], description: "the audience asked for (token-exchange)" },
    {
      name: "no-preflight",
      type: "boolean",
      group: SCENARIO,
      kinds: ["spec", "scenario"],
      description:
        "skip the pre-flight probe of a built-in scenario's provider: one set up wrongly is then measured and fails the run's thresholds (99) instead of being refused (104)",
    },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;
