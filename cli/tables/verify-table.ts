/** The flags of `edgeload verify`: proof that a target's owner runs this deployment (docs/configuration.md). */
import type { CommandSpec } from "../option-table.ts";
import { CONNECTION, TABLE_OR_JSON } from "./shared-options.ts";

export const VERIFY_COMMAND = {
  name: "verify",
  summary: "what a target's owner publishes so this deployment may load it, and whether it is there",
  usage: ["verify <host | target URL> [--status] [--format table|json]"],
  details: [
    "A deployed edgeload loads a host only once its owner has published a token only this deployment makes: a DNS TXT record at `_edgeload.<host>`, or the line in `https://<host>/.well-known/edgeload-verification`. `verify` prints both forms, asks the deployment to look for them now (POST /v1/targets/<host>/verification) and exits 0 when one is found, 104 when not. A proof stands 7 days; the first run after that checks it again.",
    "Give a URL (`http://127.0.0.1:9090`) for a loopback target: its well-known file is read at that origin. `--status` only reads what the deployment last found (GET, which a read-only token may do).",
  ],
  positionals: true,
  options: [{ name: "status", type: "boolean", description: "print what to publish and the last check, without checking now" }, TABLE_OR_JSON, ...CONNECTION],
} as const satisfies CommandSpec;
