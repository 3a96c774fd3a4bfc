/**
 * `edgeload cf-analytics`: what Cloudflare's own analytics saw of a run, reconciled with
 * what the run sent.
 *
 *   edgeload cf-analytics <run> --account ID [--zone ID] [--scripts entry,other]
 *                         [--databases id,id] [--host auth.example.com] [--margin 60s]
 *                         [--format table|json] [--api-base https://api.cloudflare.com/client/v4]
 *                         [--url … --token …]
 *
 * Reads the run's summary and per-second status counts from the edgeload API, queries the
 * Cloudflare GraphQL Analytics API for the run's window (t0 − margin … end + margin) with
 * CF_API_TOKEN (Account Analytics Read; Zone Analytics Read with --zone), and prints the
 * reconciliation (cloudflare/analytics/reconcile.ts). The first of --scripts is the entry
 * Worker the run's requests reach; --host defaults to the run target's host.
 *
 * Exit codes: 0 when the reconciliation was made (gaps are findings, not failures), 104 for
 * bad flags or a missing token, 77 when the edgeload API refused the credentials, 1 when it or
 * the Cloudflare API refused anything else.
 */
import { parseDurationMs } from "../core/spec/duration.ts";
import { AnalyticsClient, AnalyticsError, fetchRunAnalytics } from "../cloudflare/analytics/client.ts";
import { reconcile, runTrafficFrom } from "../cloudflare/analytics/reconcile.ts";
import { renderReconciliation } from "../cloudflare/analytics/reconciliation-text.ts";
import { ApiProblem, type EdgeloadClient } from "./client.ts";
import { CliError, connect, EXIT } from "./connection.ts";
import { exitCodeOfApiStatus } from "./exit-codes.ts";
import { parseCommand } from "./option-table.ts";
import { CF_ANALYTICS_COMMAND } from "./tables/analysis-tables.ts";

/** How the run's per-second counts are asked for: one row per second and status class. */
const PER_SECOND_BY_STATUS = { every: "1s", by: "status_class", metrics: "requests" } as const;

export async function cfAnalyticsCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args);
  const token = process.env.CF_API_TOKEN;
  if (!token) {
    throw new CliError(
      `CF_API_TOKEN is not set: create a Cloudflare API token with "Account Analytics Read"${flags.zone ? ' and "Zone Analytics Read"' : ""} and export it as CF_API_TOKEN`,
      EXIT.invalidConfig,
    );
  }
  const api = await connect(flags.connection);
  const { summary, rows } = await runData(api, flags.runId);
  const run = runTrafficFrom(summary, rows);
  const nowMs = Date.now();
  const startIso = new Date(run.t0Ms - flags.marginS * 1000).toISOString();
  const endIso = new Date(Math.min(run.endMs + flags.marginS * 1000, nowMs)).toISOString();

  const cloudflare = new AnalyticsClient({
    token,
    url: `${flags.apiBase.replace(/\/+$/, "")}/graphql`,
    onRetry: (r) => console.error(`  Cloudflare: ${r.reason} — retrying ${r.dataset} in ${Math.ceil(r.delayMs / 1000)} s (attempt ${r.attempt + 1})`),
  });
  let analytics;
  try {
    analytics = await fetchRunAnalytics(cloudflare, {
      accountTag: flags.account,
      zoneTag: flags.zone,
      scripts: flags.scripts,
      databases: flags.databases,
      host: flags.zone ? (flags.host ?? hostOf(run.target)) : undefined,
      startIso,
      endIso,
    });
  } catch (error) {
    if (error instanceof AnalyticsError) throw new CliError(error.message);
    throw error;
  }
  const result = reconcile(run, analytics, { nowMs, marginS: flags.marginS, entryScript: flags.scripts[0] ?? null });
  console.log(flags.format === "json" ? JSON.stringify(result, null, 2) : renderReconciliation(result));
  return EXIT.ok;
}

interface Flags {
  readonly runId: string;
  readonly account: string;
  readonly zone: string | undefined;
  readonly scripts: string[];
  readonly databases: string[];
  readonly host: string | undefined;
  readonly marginS: number;
  readonly format: "table" | "json";
  readonly apiBase: string;
  readonly connection: { url?: string | undefined; token?: string | undefined };
}

/** The flags, every problem reported at once (104). */
export function parseFlags(args: string[]): Flags {
  const { values: v, positionals } = parseCommand(CF_ANALYTICS_COMMAND, args);
  const problems: string[] = [];
  if (!positionals[0]) problems.push("a run id is required (see `edgeload runs`)");
  if (!v.account) problems.push("--account: the Cloudflare account id (32 hex characters) is required");
  const marginMs = parseDurationMs(v.margin);
  if (marginMs === undefined || marginMs % 1000 !== 0) problems.push(`--margin: "${v.margin}" must be whole seconds like 60s or 2m`);
  if (v.format !== "table" && v.format !== "json") problems.push(`--format: "${v.format}" must be table or json`);
  if (!/^https?:\/\//.test(v["api-base"])) problems.push(`--api-base: "${v["api-base"]}" must be an http(s) URL`);
  if (problems.length) throw new CliError(`cf-analytics: ${problems.join("\n  ")}`, EXIT.invalidConfig);
  const list = (s: string | undefined) =>
    (s ?? "")
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);
  return {
    runId: positionals[0]!,
    account: v.account!,
    zone: v.zone,
    scripts: list(v.scripts),
    databases: list(v.databases),
    host: v.host,
    marginS: marginMs! / 1000,
    format: v.format as "table" | "json",
    apiBase: v["api-base"],
    connection: { url: v.url, token: v.token },
  };
}

async function runData(api: EdgeloadClient, runId: string) {
  try {
    const view = await api.getRun(runId);
    if (!view.startedAt) throw new CliError(`run ${runId} has not started yet: nothing to reconcile`);
    const [summary, query] = await Promise.all([api.summary(runId), api.query(runId, PER_SECOND_BY_STATUS)]);
    return { summary, rows: query.rows };
  } catch (error) {
    if (error instanceof ApiProblem) {
      // A refused credential is 77, as everywhere; anything else the API refused is 1 (see above).
      const code = exitCodeOfApiStatus(error.status, error.body.type) === EXIT.authFailed ? EXIT.authFailed : EXIT.failure;
      throw new CliError(error.status === 404 ? `no run ${runId}` : error.message, code);
    }
    throw error;
  }
}

function hostOf(target: string): string | undefined {
  try {
    return new URL(target).hostname;
  } catch {
    return undefined;
  }
}
