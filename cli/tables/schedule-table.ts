/** The flags of `edgeload schedule`: scheduled runs with verdicts and alerts (docs/schedules.md). */
import type { CommandSpec } from "../option-table.ts";
import { CONNECTION, LIST_FORMAT } from "./shared-options.ts";

export const SCHEDULE_COMMAND = {
  name: "schedule",
  summary: "scheduled runs: a cron, a spec, a baseline and webhooks that hear of regressions",
  usage: [
    "schedule add <name> --cron '0 3 * * *' --spec spec.json|script.js [-e NAME=VALUE]... [--webhook URL]... [--slack URL]... [--secret S] [--baseline RUN] [--on regressed,failed,inconclusive]",
    "schedule list [--format table|json]",
    "schedule show <schedule> [--format table|json]",
    "schedule pause <schedule>      (and `schedule resume <schedule>`)",
    "schedule rm <schedule>",
  ],
  details: [
    "The deployment's cron trigger looks at the schedules every minute (UTC). Each turn starts one run through the same limits, allow-list and cost cap as `edgeload run`; a turn whose previous run is still going is skipped and says so; turns missed during an outage are reported, not piled up.",
    "Each run's verdict is its thresholds, then `compare` against the baseline (a pinned run, or the oldest of the schedule's last 7 passed runs): passed, regressed, failed or inconclusive. Webhooks get it signed (x-edgeload-signature: v1=HMAC-SHA256 of `<x-edgeload-timestamp>.<body>`); their hosts must be in the deployment's ALLOWED_WEBHOOKS. A secret left out is generated and printed once.",
  ],
  positionals: true,
  options: [
    { name: "cron", type: "string", value: "EXPR", description: "add: five cron fields, UTC (minute hour day-of-month month day-of-week)" },
    { name: "spec", type: "string", value: "FILE", description: "add: the run spec (JSON) or k6 script (bundled and stored), as `edgeload run` takes it" },
    { name: "env", short: "e", type: "string", value: "NAME=VALUE", multiple: true, description: "add: a k6 script's __ENV" },
    {
      name: "public-env",
      type: "string",
      value: "NAME",
      multiple: true,
      description: "add: an __ENV name whose value may be stored and shown; every other -e value is redacted",
    },
    { name: "target", type: "string", value: "URL", description: "add: a k6 script's target (else -e BASE_URL)" },
    { name: "webhook", type: "string", value: "URL", multiple: true, description: "add: a webhook that receives the verdict as JSON" },
    { name: "slack", type: "string", value: "URL", multiple: true, description: "add: a Slack incoming webhook (a text message)" },
    { name: "secret", type: "string", value: "S", description: "add: the webhooks' HMAC key, 16 characters or more (default: one generated per webhook)" },
    {
      name: "baseline",
      type: "string",
      value: "RUN",
      description: "add: compare with this run always (default: the oldest of the schedule's last 7 passed runs)",
    },
    {
      name: "on",
      type: "string",
      value: "LIST",
      default: "regressed,failed,inconclusive",
      description:
        "add: the outcomes the webhooks hear of (passed, regressed, failed, inconclusive, refused, skipped, missed; failed also hears refused turns, inconclusive skipped and missed ones, and a webhook alerted in a bad streak hears its recovery)",
    },
    LIST_FORMAT,
    ...CONNECTION,
  ],
} as const satisfies CommandSpec;
