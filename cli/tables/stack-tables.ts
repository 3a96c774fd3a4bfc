/**
 * The flags of the commands that set things up: the local stack (`dev`, `demo`), seed
 * sets (`seed`), and the way to a Cloudflare account (`plan`, `deploy`). `plan` and
 * `deploy` parse their own flags (plan-command.ts, deploy-command.ts): main.ts checks the
 * arguments against these tables first, and cli-docs.test.ts holds the two in step.
 */
import type { CommandSpec } from "../option-table.ts";
import { CONNECTION } from "./shared-options.ts";

export const DEV_COMMAND = {
  name: "dev",
  summary: "start the local stack (API, shards, D1, R2 and a test target) on this machine",
  usage: ["dev [--api-port 8787] [--target-port 9090]"],
  details: ["Writes .edgeload/dev.json, so other commands in this project find the stack without --url/--token. Ctrl-C stops it."],
  positionals: false,
  options: [
    { name: "api-port", type: "string", value: "PORT", default: "8787", description: "the API's port" },
    { name: "target-port", type: "string", value: "PORT", default: "9090", description: "the test target's port" },
  ],
} as const satisfies CommandSpec;

export const DEMO_COMMAND = {
  name: "demo",
  summary: "the local stack, a seeded token set and two Authrim scenarios, end to end",
  usage: ["demo [--summary-export FILE] [-q]"],
  positionals: false,
  options: [
    { name: "summary-export", type: "string", value: "FILE", description: "write each scenario's summary JSON (FILE.<scenario>.json)" },
    { name: "quiet", short: "q", type: "boolean", description: "no progress line" },
  ],
} as const satisfies CommandSpec;

export const SEED_COMMAND = {
  name: "seed",
  summary: "make a seed set at the target (tokens, users, sessions…), store it and print its signed URL",
  usage: [
    "seed access-tokens --count 3000 [--name tokens-3k] [--mix valid=60,valid_exchanged=5,…] [flags]",
    "seed users|refresh-tokens|sessions|auth-codes --count N [--name NAME] [flags]",
  ],
  details: [
    "Against a running `edgeload dev`, the target's URL, client and admin secret default to the local target's. After a failure, the same command resumes from .edgeload/seeding/<name>.json.",
  ],
  positionals: true,
  options: [
    { name: "count", type: "string", value: "N", description: "how many to make (required)" },
    { name: "name", type: "string", value: "NAME", description: "the seed set's name (default <kind>-<count>)" },
    { name: "users", type: "string", value: "N", description: "distinct users the set is spread over" },
    { name: "mix", type: "string", value: "TYPE=PCT,…", description: "access-tokens only: the share of each token type" },
    { name: "concurrency", type: "string", value: "N", default: "20", description: "calls to the target at once" },
    { name: "expires-in", type: "string", value: "D", default: "24h", description: "how long the signed URL is valid" },
    { name: "out", type: "string", value: "FILE", description: "also write the set to FILE (mode 600)" },
    { name: "base-url", type: "string", value: "URL", group: "The target", description: "the target (default: the local target)" },
    { name: "client-id", type: "string", value: "ID", group: "The target", description: "its client" },
    { name: "client-secret", type: "string", value: "SECRET", group: "The target", description: "the client's secret" },
    { name: "admin-secret", type: "string", value: "SECRET", group: "The target", description: "the target's admin API secret" },
    { name: "redirect-uri", type: "string", value: "URI", group: "The target", description: "auth-codes: a redirect URI registered for the client" },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;

export const PLAN_COMMAND = {
  name: "plan",
  summary: "shards, platform limits and estimated cost of a spec or script, before any load",
  usage: [
    "plan <spec.json | script.js [-e NAME=VALUE]...> [--max-cost USD] [--var NAME=VALUE]... [--config wrangler.toml] [--format table|json] [--probe] [--screenshots N] [--cron EXPR] [--url URL --token TOKEN]",
  ],
  details: [
    "The cost is priced at the spec's expectedLatency (50 ms unless it sets one): a shard sustains its connection slots over the target's time to first byte, so a slower target needs more shards and costs more. A table beside it prices the run at 30, 50, 100 and 200 ms. --probe times 20 sequential requests to the target (its first plain GET step, else its origin; 15 s at most) and plans at their p95, printing both: with a deployment named, from one shard in each region of the run (POST /v1/probe), at the slowest region's p95 (a deployment without that route is probed from here, and the plan says so); else from this machine. --screenshots prices a k6/browser script's screenshots (an R2 write each, kept for the results retention): the plan cannot count them itself.",
    "Every line Cloudflare bills is priced: the objects' requests, duration and storage rows, D1's rows, R2, the API Worker, Workers Logs at the config's [observability] head_sampling_rate, D1 storage for its RESULTS_RETENTION_DAYS (90 by default) and a k6 script's Dynamic Workers (one ID for the shards, one each for setup() and teardown()).",
    "The caps are the deployment's wrangler.toml [vars] (or --config), else the defaults; --var MAX_RATE_PER_S=… (and MAX_DURATION_S, MAX_SHARDS, MAX_TOTAL_REQUESTS, MAX_VUS, SUBREQUESTS_PER_INVOCATION, AGGREGATOR_FAN_IN) stands for the secret a deployment sets it with. A run over the caps is planned without them and printed all the same, followed by each cap it needs and the `npx wrangler secret put` command that raises it.",
    "With a deployment named (--url/--token or EDGELOAD_URL/EDGELOAD_TOKEN) it also asks it (POST /v1/plan, which starts nothing) whether its ALLOWED_TARGETS take the target, and whether the target's owner has proved control where the deployment asks it (GET /v1/targets/<host>/verification; `edgeload verify` prints what to publish); without one nothing is contacted. Exit 104 when the spec is invalid, the plan needs a cap raised or breaks a platform limit, the cost is over --max-cost, or the deployment would refuse the target (not allowed, or not verified).",
  ],
  positionals: true,
  external: true,
  options: [
    { name: "max-cost", type: "string", value: "USD", description: "exit 104 when the estimated cost is above USD" },
    { name: "config", type: "string", value: "FILE", description: "the deployment's wrangler.toml (default: the project's)" },
    { name: "format", type: "string", value: "table|json", default: "table", description: "output format" },
    { name: "var", type: "string", value: "NAME=VALUE", multiple: true, description: "a spec's {{vars.NAME}}, or a deployment cap (MAX_RATE_PER_S, …)" },
    { name: "secret", type: "string", value: "NAME=VALUE", multiple: true, description: "a spec's {{secrets.NAME}}" },
    { name: "env", short: "e", type: "string", value: "NAME=VALUE", multiple: true, description: "a script's __ENV" },
    {
      name: "public-env",
      type: "string",
      value: "NAME",
      multiple: true,
      description: "an __ENV name whose value the plan shows; every other -e value is redacted",
    },
    { name: "modules-dir", type: "string", value: "DIR", description: "where a script's https:// imports are read first, laid out as host/path" },
    {
      name: "allow-http-modules",
      type: "boolean",
      description: "also fetch a script's plain http:// imports from hosts other than loopback (refused without it: anyone on the path can change them)",
    },
    { name: "target", type: "string", value: "URL", description: "a script's target (else -e BASE_URL)" },
    { name: "cron", type: "string", value: "EXPR", description: "also price it as a schedule on this cron (UTC): its runs in 30 days and cost a month" },
    {
      name: "probe",
      type: "boolean",
      description:
        "measure the target's time to first byte (20 requests, p95: from each region of the run through the named deployment, else from here) and plan at it instead of expectedLatency",
    },
    {
      name: "screenshots",
      type: "string",
      value: "N",
      description: "the screenshots a k6/browser script takes over the run, priced as R2 writes and storage for the retention (default 0)",
    },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;

export const DEPLOY_COMMAND = {
  name: "deploy",
  summary: "wrangler deploy with bundle-size and config checks first",
  usage: ["deploy [--dry-run] [--with-target] [--config wrangler.toml]"],
  positionals: false,
  external: true,
  options: [
    { name: "dry-run", type: "boolean", description: "build and check only; print what a deploy would run" },
    { name: "with-target", type: "boolean", description: "also the Authrim-style test target (workers/target)" },
    { name: "config", type: "string", value: "FILE", description: "the wrangler.toml to deploy (default: the project's)" },
  ],
} as const satisfies CommandSpec;
