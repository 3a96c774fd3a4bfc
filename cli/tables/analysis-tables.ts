/** The flags of the commands that analyse runs: query, compare, ladder, crosscheck, cf-analytics. */
import type { CommandSpec } from "../option-table.ts";
import { CONNECTION, TABLE_OR_JSON } from "./shared-options.ts";

export const QUERY_COMMAND = {
  name: "query",
  summary: "analytics over a run's stored windows, read-only SQL, or the target series it scraped",
  usage: [
    "query <run> [--by region,step,status_class|shard,colo] [--every 1m|run] [--metrics rps,p95,…] [--trend duration|ttfb|corrected]",
    'query --sql "SELECT … ?1 …" [--param VALUE]...',
    "query <run> --series [NAME]",
  ],
  details: [
    "Asks the API that is named (--url/--token, EDGELOAD_URL/EDGELOAD_TOKEN, or a running `edgeload dev`) and fails when it cannot: exit 104 for --url without a token, 1 for an API that does not answer. With --local, or no API named at all, reads the local state's results database directly.",
  ],
  positionals: true,
  options: [
    { name: "by", type: "string", value: "LIST", description: "group rows by region, step, status_class, shard, colo" },
    { name: "every", type: "string", value: "D|run", description: "a row per interval (1s, 1m…) or one for the whole run (default)" },
    {
      name: "metrics",
      type: "string",
      value: "LIST",
      description: "columns: requests, rps, error_rate, p50, p95, p99, p99.9… (default requests,rps,error_rate,p50,p95,p99)",
    },
    { name: "trend", type: "string", value: "NAME", description: "the latency the percentiles are of: duration (default), ttfb or corrected" },
    { name: "format", type: "string", value: "table|json|csv", default: "table", description: "output format" },
    { name: "sql", type: "string", value: "SQL", description: "a read-only SQL statement on the results database" },
    { name: "param", type: "string", value: "VALUE", multiple: true, description: "the value of the SQL's next ?N" },
    { name: "series", type: "boolean", description: "the target's series the run scraped (one name, or all)" },
    { name: "local", type: "boolean", description: "read .edgeload/state directly, not the API" },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;

export const COMPARE_COMMAND = {
  name: "compare",
  summary: "did a run get slower or more error-prone than its baseline? (exit 99 when it did, 75 when a region or metric could not be compared)",
  usage: [
    "compare <baseline-run|baseline-name> <run> [--min-effect 5%] [--min-latency 1ms] [--min-rate 0.1%] [--confidence 95%] [--save-baseline NAME]",
    "compare <run> --save-baseline NAME                 name a run, e.g. the first baseline",
  ],
  details: [
    "With --save-baseline the run becomes the named baseline only when the comparison passed (nothing regressed and everything was compared) and the run itself passed.",
  ],
  positionals: true,
  options: [
    TABLE_OR_JSON,
    { name: "min-effect", type: "string", value: "PCT", description: "smallest relative change that counts (default 5%)" },
    { name: "min-latency", type: "string", value: "D", description: "smallest latency change that counts (default 1ms)" },
    { name: "min-rate", type: "string", value: "PCT", description: "smallest change of a rate that counts (default 0.1%)" },
    { name: "confidence", type: "string", value: "PCT", description: "confidence of the intervals (default 95%)" },
    { name: "save-baseline", type: "string", value: "NAME", description: "move the baseline NAME to this run if the comparison and the run passed" },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;

export const LADDER_COMMAND = {
  name: "ladder",
  summary: "a capacity ladder: runs at rising rates until one breaks; prints recommended, peak and hard limit (exit 75 when the first step already broke)",
  usage: [
    "ladder --scenario NAME --presets rps100,rps500 [--duration-scale 0.1] [--seed NAME] [flags]",
    "ladder --scenario NAME --rates 50,100,200 --duration 30s [flags]",
    "ladder --target URL --rates 50,100,200,400 --duration 5s [--threshold …]... [flags]",
  ],
  details: ["Exit 0 when the ladder completed (whether or not it found a limit), 104 for bad input, 105 when interrupted, 103 when a run ended in error."],
  positionals: false,
  options: [
    { name: "scenario", type: "string", value: "NAME", group: "Steps", description: "a built-in scenario" },
    { name: "presets", type: "string", value: "LIST", group: "Steps", description: "the scenario's presets, rising: rps100,rps500" },
    { name: "rates", type: "string", value: "LIST", group: "Steps", description: "arrival rates per second, rising: 50,100,200" },
    { name: "duration", type: "string", value: "D", group: "Steps", description: "each step's length (with --rates)" },
    { name: "duration-scale", type: "string", value: "F", group: "Steps", description: "shorten each preset by F" },
    { name: "cool-down", type: "string", value: "D", default: "10s", group: "Steps", description: "pause between steps" },
    { name: "error-limit", type: "string", value: "PCT", default: "1%", group: "Steps", description: "a step with more errors breaks" },
    { name: "out", type: "string", value: "FILE", group: "Steps", description: "write the capacity table as JSON" },
    { name: "quiet", short: "q", type: "boolean", group: "Steps", description: "no progress line" },
    { name: "target", type: "string", value: "URL", group: "Each run", description: "the URL (path included) of the --target form; a scenario's target" },
    { name: "name", type: "string", value: "NAME", group: "Each run", description: "the runs' name prefix" },
    { name: "threshold", type: "string", value: "METRIC=EXPR", multiple: true, group: "Each run", description: "a threshold every step must pass" },
    { name: "shards", type: "string", value: "N", group: "Each run", description: "shards per step" },
    { name: "regions", type: "string", value: "LIST", group: "Each run", description: "location hints, comma-separated" },
    { name: "timeout", type: "string", value: "D", group: "Each run", description: "request timeout" },
    { name: "max-vus", type: "string", value: "N", group: "Each run", description: "most iterations in flight" },
    { name: "method", type: "string", value: "METHOD", group: "Each run", description: "the --target form's method" },
    { name: "header", type: "string", value: '"Name: value"', multiple: true, group: "Each run", description: "a --target form header" },
    { name: "body", type: "string", value: "TEXT", group: "Each run", description: "the --target form's body" },
    { name: "seed", type: "string", value: "NAME", group: "Each run", description: "the scenario's seed set" },
    { name: "client-id", type: "string", value: "ID", group: "Each run", description: "the scenario's client" },
    { name: "client-secret", type: "string", value: "SECRET", group: "Each run", description: "its secret" },
    { name: "admin-secret", type: "string", value: "SECRET", group: "Each run", description: "the target's admin API secret" },
    { name: "redirect-uri", type: "string", value: "URI", group: "Each run", description: "a registered redirect URI" },
    { name: "scope", type: "string", value: "SCOPE", group: "Each run", description: "the scope asked for" },
    { name: "audience", type: "string", value: "AUD", group: "Each run", description: "the audience asked for" },
    {
      name: "no-preflight",
      type: "boolean",
      group: "Each run",
      description: "skip the pre-flight probe of the scenario's provider: one set up wrongly then fails its steps instead of being refused (104)",
    },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;

export const CROSSCHECK_COMMAND = {
  name: "crosscheck",
  summary: "hold a run against k6 measuring the same load (exit 99 when they disagree, 75 when nothing or not the load could be compared)",
  usage: [
    "crosscheck <run> --k6 summary.json          import k6's summary and compare",
    "crosscheck <run> --run-k6 [--seed NAME] [--client-secret S] [--admin-secret S] [--k6-out FILE] [--floor]",
    "crosscheck <run>                            the comparisons stored for the run",
    "crosscheck --abba <spec.json> [--seed NAME] [--client-secret S] …   edgeload, k6, k6, edgeload on one spec",
  ],
  details: [
    "--run-k6 runs k6 after the edge run: a target that warms its caches makes k6 look faster. --abba runs the spec four times (edgeload, k6, k6, edgeload): the order's effect cancels out of the tools' mean difference, and each tool's two runs show how far the target moved by itself. Its verdict is agree, differ beyond the target's own noise, or the target moved too much to tell.",
    "--floor then replays the run (one GET step at a constant rate) with workerd's own paced fetch loop in a Durable Object, with no edgeload in it, and says whose each disagreeing latency row is: the runtime's, when that loop disagrees with k6 as much, or edgeload's own.",
  ],
  positionals: true,
  options: [
    { name: "k6", type: "string", value: "FILE", description: "k6's summary (--summary-export, handleSummary JSON, machine-readable, or a k6 Cloud export)" },
    { name: "run-k6", type: "boolean", description: "run local k6 with the run's target, load and seed, then compare" },
    {
      name: "abba",
      type: "boolean",
      description: "with a spec file: run edgeload, k6, k6, edgeload on it and tell the tools' difference from the target's drift",
    },
    { name: "k6-out", type: "string", value: "FILE", description: "keep k6's summary of --run-k6 in FILE" },
    {
      name: "floor",
      type: "boolean",
      description: "then run workerd's own paced fetch loop on the same load, to tell the runtime's part of a residual from edgeload's",
    },
    {
      name: "no-preflight",
      type: "boolean",
      description: "--abba: skip the pre-flight probe of a built-in scenario's provider (one set up wrongly is then measured, not refused)",
    },
    { name: "seed", type: "string", value: "NAME", description: "the seed set of a scenario run's replay" },
    { name: "client-id", type: "string", value: "ID", description: "the replay's client (default: the local target's)" },
    { name: "client-secret", type: "string", value: "SECRET", description: "its secret" },
    { name: "admin-secret", type: "string", value: "SECRET", description: "the target's admin API secret" },
    { name: "redirect-uri", type: "string", value: "URI", description: "a registered redirect URI" },
    TABLE_OR_JSON,
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;

export const CF_ANALYTICS_COMMAND = {
  name: "cf-analytics",
  summary: "what Cloudflare's own analytics saw of a run, reconciled with what it sent (needs CF_API_TOKEN)",
  usage: ["cf-analytics <run> --account ID [--zone ID] [--scripts entry,other] [--databases id,id] [--host HOST] [--margin 60s]"],
  details: ["CF_API_TOKEN needs Account Analytics Read (and Zone Analytics Read with --zone)."],
  positionals: true,
  options: [
    { name: "account", type: "string", value: "ID", description: "the Cloudflare account id (required)" },
    { name: "zone", type: "string", value: "ID", description: "the target's zone, for its HTTP analytics" },
    { name: "scripts", type: "string", value: "LIST", description: "Worker names; the first is the entry the run's requests reach" },
    { name: "databases", type: "string", value: "LIST", description: "D1 database ids" },
    { name: "host", type: "string", value: "HOST", description: "the target's host (default: the run target's)" },
    { name: "margin", type: "string", value: "D", default: "60s", description: "widen the run's window by D each side" },
    TABLE_OR_JSON,
    { name: "api-base", type: "string", value: "URL", default: "https://api.cloudflare.com/client/v4", description: "the Cloudflare API" },
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;
