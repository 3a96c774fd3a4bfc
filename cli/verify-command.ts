/**
 * `edgeload verify <host | target URL> [--status] [--format table|json]`: what a target's
 * owner publishes so this deployment may load it (a DNS TXT record or a well-known file,
 * core/spec/target-ownership.ts), and whether the deployment finds it. Without --status it
 * asks the deployment to look now (POST /v1/targets/:host/verification), which stores what
 * it found; with it, only reads the last check (GET). Exit 0 when the host stands verified,
 * 104 when not, so a CI job can wait for a DNS change with it.
 *
 * `edgeload plan` prints the same state in a line (ownershipLine).
 */
import { hostOfTarget, parseOwnershipHost } from "../core/spec/target-ownership.ts";
import type { TargetVerification } from "./client.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { VERIFY_COMMAND } from "./tables/verify-table.ts";

export async function verifyCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(VERIFY_COMMAND, args);
  if (positionals.length !== 1)
    throw new CliError(`one host or target URL is required, e.g. \`edgeload verify api.example.com\` (edgeload verify --help)`, EXIT.invalidConfig);
  if (values.format !== "table" && values.format !== "json") throw new CliError(`--format: table or json, not "${values.format}"`, EXIT.invalidConfig);
  const { host, target } = hostAndTarget(positionals[0]!);
  const view = await (await connect(values)).targetVerification(values.status ? "GET" : "POST", host, target);
  console.log(values.format === "json" ? JSON.stringify(view, null, 2) : renderVerification(view));
  return view.state === "verified" ? EXIT.ok : EXIT.invalidConfig;
}

/** `api.example.com`, or a target URL (`http://127.0.0.1:9090`) whose origin a loopback host's file is read at. */
export function hostAndTarget(arg: string): { host: string; target?: string } {
  if (arg.includes("://")) {
    const url = URL.canParse(arg) ? new URL(arg) : null;
    if (!url || !/^https?:$/.test(url.protocol))
      throw new CliError(`"${arg}" is not an http(s) URL; give a host (api.example.com) or a target URL`, EXIT.invalidConfig);
    return { host: hostOfTarget(url), target: url.origin };
  }
  const parsed = parseOwnershipHost(arg);
  if (!parsed.ok) throw new CliError(parsed.detail, EXIT.invalidConfig);
  return { host: parsed.value };
}

const METHOD_NAME = { dns: "its DNS TXT record", "well-known": "its well-known file" } as const;

/** The host's state in a sentence, then what to publish, then whether this deployment asks it. */
export function renderVerification(v: TargetVerification): string {
  const lines = [`${v.host}: ${stateText(v)}`];
  for (const f of v.findings ?? []) lines.push(`  ${f.found ? "found" : "not found"} (${f.method}): ${f.detail}`);
  if (!v.findings && v.lastCheck && v.state !== "verified") lines.push(`  last check (${when(v.checkedAt)}): ${v.lastCheck}`);
  lines.push(
    "",
    v.state === "verified" ? "Keep publishing one of:" : `To let this deployment load ${v.host}, publish one of:`,
    `  a DNS TXT record   ${v.publish.dns.name}`,
    `    with the value   ${v.publish.dns.value}`,
    `  or a file          ${v.publish.wellKnown.url}`,
    `    with the line    ${v.publish.wellKnown.line}`,
  );
  if (v.state !== "verified") lines.push(`then run \`edgeload verify ${v.host}\` again.`);
  lines.push("", v.required ? `This deployment asks it: ${v.why}.` : `This deployment does not ask it of ${v.host} now: ${v.why}.`);
  return lines.join("\n");
}

function stateText(v: TargetVerification): string {
  const how = v.method ? METHOD_NAME[v.method] : "a proof";
  if (v.state === "verified") return `verified by ${how} on ${when(v.verifiedAt)}; it stands until ${when(v.expiresAt)}, then the next run checks it again`;
  if (v.state === "expired") return `the proof by ${how} expired on ${when(v.expiresAt)}; the next run (or \`edgeload verify\`) checks it again`;
  return v.checkedAt ? "not verified" : "not verified (never checked)";
}

/** `edgeload plan`'s line about the target's ownership. */
export function ownershipLine(v: TargetVerification): string {
  if (!v.required) return `target ownership: not asked (${v.why})`;
  if (v.state === "verified") return `target ownership: verified by ${v.method ? METHOD_NAME[v.method] : "a proof"} until ${when(v.expiresAt)}`;
  if (v.state === "expired") return `target ownership: the proof expired on ${when(v.expiresAt)}; the run's admission checks it again`;
  return `target ownership: not verified — ${v.instructions}; then \`edgeload verify ${v.host}\``;
}

/** An ISO time as `2026-11-01 12:00 UTC`. */
function when(iso: string | null): string {
  return iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "(unknown)";
}
