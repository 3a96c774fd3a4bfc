/**
 * Submitting a run and following it to its end, as `edgeload run` and `edgeload demo` do:
 * the plan in a line, live progress (one line redrawn on a terminal, a line every 5 s
 * otherwise), Ctrl-C to abort, then the summary, the delivery check against a counting
 * target, the files asked for, and where to look next (report, dashboard). The exit code
 * is k6's for the run's final status.
 */
import { writeFile } from "node:fs/promises";
import { exitCodeOf, type RunView } from "../core/run/protocol.ts";
import type { Summary } from "../core/run/summary.ts";
import { renderSummary } from "../core/run/summary-text.ts";
import type { LivePoint } from "../core/run/live-view.ts";
import { scriptLines } from "../core/run/script-report.ts";
import { formatMs } from "../core/metrics/clock-resolution.ts";
import { renderDelivery } from "../core/run/delivery.ts";
import type { EdgeloadClient } from "./client.ts";
import { EXIT } from "./exit-codes.ts";
import { checkDelivery, type TargetLedger } from "./delivery-check.ts";

export interface FollowOptions {
  readonly summaryExport?: string | undefined;
  readonly quiet?: boolean | undefined;
  /** A target that counts what it receives: reconcile the run with it at the end. */
  readonly ledger?: TargetLedger | null;
  /** `--out json=FILE` targets: k6 JSON lines written once the run ends. */
  readonly jsonOut?: readonly string[];
  /** A k6 script's handleSummary: its outputs replace the printed summary, as under k6. */
  readonly handleSummary?: ((summary: Summary) => Promise<void>) | null;
  /** The stack goes away when the command ends (the demo): point at the local state, not at its API. */
  readonly stackStops?: boolean;
  /** false: no pre-flight probe of a built-in scenario's provider (`--no-preflight`). */
  readonly preflight?: boolean;
}

/** Submits a spec, shows live progress, prints the summary; returns the k6 exit code. */
export async function submitAndFollow(client: EdgeloadClient, spec: unknown, options: FollowOptions = {}): Promise<number> {
  return (await followRun(client, spec, options)).exit;
}

/** Submits a run, shows its progress, prints its summary; the exit code k6 would give. */
export async function followRun(client: EdgeloadClient, spec: unknown, options: FollowOptions = {}): Promise<{ exit: number; summary: Summary }> {
  // A built-in scenario's provider set up so that the run cannot pass is refused before any load (cli/preflight.ts).
  if (options.preflight !== false) await (await import("./preflight.ts")).preflight(client, spec);
  const run = await client.createRun(spec);
  const regions = [...new Set(run.plan.shards.map((s) => s.region))];
  const n = run.plan.shards.length;
  console.log(`run ${run.id}: ${n} shard${n === 1 ? "" : "s"} in ${regions.join(", ")}, starting ${run.startsAt}`);
  for (const note of run.plan.notes) console.log(`  note: ${note}`);
  // The link signs one browser in to this run's page (once, within 10 minutes); the token never goes in a URL.
  const dashboard = await dashboardLink(client, run.id);
  console.log(
    `  dashboard: ${"url" in dashboard ? dashboard.url : "page" in dashboard ? `${dashboard.page}   (${dashboard.why})` : `no link (${dashboard.failed})`}`,
  );

  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(EXIT.aborted);
    interrupted = true;
    console.log("\naborting the run (Ctrl-C again to leave without waiting)…");
    void client.abort(run.id).catch((error: unknown) => console.error(`abort failed: ${String(error)}`));
  };
  process.on("SIGINT", onSigint);
  const tty = process.stdout.isTTY === true;
  let lastPrinted = 0;
  let view: RunView;
  // A k6 script's errors and console lines, each window's as it is shown, on stderr as k6
  // prints them (--quiet too, as k6's); the first distinct of each with counts (script-report.ts).
  let abortShown = false;
  const onWindow = (point: LivePoint) => {
    if (!point.script) return;
    if (tty && !options.quiet) process.stdout.write("\r\u001b[K");
    for (const line of scriptLines(point.t, point.script)) console.error(line);
    abortShown ||= point.script.aborted !== null;
  };
  try {
    view = await client.follow(
      run.id,
      (v) => {
        if (options.quiet) return;
        if (tty) process.stdout.write(`\r${progressLine(v)}\u001b[K`);
        else if (Date.now() - lastPrinted >= 5000) {
          console.log(progressLine(v));
          lastPrinted = Date.now();
        }
      },
      { onWindow },
    );
  } finally {
    process.off("SIGINT", onSigint);
  }
  if (tty && !options.quiet) process.stdout.write("\n");
  // The script's own end (an abort the stream did not carry, an exception or a timeout in setup() or teardown()), said even when handleSummary replaces the summary.
  if ((view.endedByScript || view.scriptTimeout) && view.abortReason && !abortShown) console.error(`ERRO ${view.abortReason}`);
  const summary: Summary = await client.summary(run.id);
  await printSummary(summary, options.handleSummary ?? null);
  if (options.ledger) {
    try {
      console.log(renderDelivery(await checkDelivery(client, run.id, options.ledger)) + "\n");
    } catch (error) {
      console.log(`  delivery: not reconciled (${(error as Error).message})\n`);
    }
  }
  if (options.summaryExport) {
    await writeFile(options.summaryExport, JSON.stringify(summary, null, 2) + "\n");
    console.log(`summary written to ${options.summaryExport}`);
  }
  for (const file of options.jsonOut ?? []) await (await import("./json-output.ts")).writeJsonOutput(client, summary, file);
  // Where to look next: the first dashboard link may have expired during a long run.
  if (options.stackStops) console.log(`report:    edgeload report ${run.id} --local   (reads the local state this stack leaves behind)`);
  else {
    console.log(nextSteps(run.id, run.links.report ?? null, await dashboardLink(client, run.id)));
  }
  // k6's code for the final status, the same one the HTTP API reports (core/run/protocol.ts).
  return { exit: exitCodeOf(view.status, view.endedByScript, view.scriptTimeout) ?? EXIT.runError, summary };
}

/**
 * The end-of-test summary: the script's handleSummary() outputs in its place, or the default
 * one. As k6 does, a handleSummary() that throws is logged and the default summary printed;
 * the exports and the exit code stand.
 */
async function printSummary(summary: Summary, handleSummary: FollowOptions["handleSummary"] | null): Promise<void> {
  if (handleSummary) {
    const failure = await handleSummary(summary).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    if (failure === null) return;
    // The script's error comes from its own realm: an Error there is no Error here.
    const { error } = failure;
    const message = typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error);
    console.error(`ERRO handleSummary() failed: ${message}`);
  }
  console.log("\n" + renderSummary(summary) + "\n");
}

/** A view link into the dashboard; the page alone where a link would be read by others (CI); or why the API gave none. */
export type DashboardLink = { readonly url: string } | { readonly page: string; readonly why: string } | { readonly failed: string };

/**
 * Whether to print sign-in links: not in CI (`CI` set, as every CI service sets it), whose
 * logs others read — public ones on public repositories — unless EDGELOAD_VIEW_LINKS=1 asks.
 */
export function printsViewLinks(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "false" && env.CI !== "0";
  return !ci || env.EDGELOAD_VIEW_LINKS === "1";
}

/**
 * A dashboard link for the run, or why there is none. The run goes on without one (its
 * verdict is the exit code), but the line says the link failed rather than vanishing.
 */
async function dashboardLink(client: EdgeloadClient, runId: string): Promise<DashboardLink> {
  if (!printsViewLinks(process.env)) {
    return { page: `${client.baseUrl}/v1/runs/${runId}/dashboard`, why: `no sign-in link in CI logs: \`edgeload dashboard ${runId}\` prints one` };
  }
  try {
    return { url: (await client.dashboardLink({ run: runId })).url };
  } catch (error) {
    return { failed: (error as Error).message.split("\n")[0]! };
  }
}

/** The lines after a run's summary: how to get its report, and a dashboard link (or why there is none). */
export function nextSteps(runId: string, reportUrl: string | null, dashboard: DashboardLink): string {
  return [
    `report:    edgeload report ${runId}   (Markdown + HTML in reports/${runId}/${reportUrl ? `; the API serves it at ${reportUrl}` : ""})`,
    "url" in dashboard
      ? `dashboard: ${dashboard.url}   (opens once, within 10 minutes; \`edgeload dashboard ${runId}\` for a fresh one)`
      : "page" in dashboard
        ? `dashboard: ${dashboard.page}   (${dashboard.why})`
        : `dashboard: no link (${dashboard.failed}; \`edgeload dashboard ${runId}\` to try again)`,
  ].join("\n");
}

export function progressLine(view: RunView): string {
  const l = view.live;
  const p = view.progress;
  return [
    view.status.padEnd(9),
    `${p.elapsedS.toFixed(1)}s/${p.durationS.toFixed(0)}s`,
    // A closed-model run's load is its VUs; its rate follows from the target's latency.
    // A run of named scenarios may have both.
    [
      l.targetRatePerS === null ? null : `target ${l.targetRatePerS.toFixed(l.targetRatePerS < 10 ? 1 : 0)}/s`,
      l.targetVUs === undefined ? null : `vus ${l.targetVUs}`,
    ]
      .filter(Boolean)
      .join(" · ") || "vus 0",
    `achieved ${l.achievedRatePerS.toFixed(0)}/s`,
    `reqs ${l.requests}`,
    `failed ${l.failed}`,
    `dropped ${l.dropped}`,
    `p95 ${l.p95Ms === null ? "-" : formatMs(l.p95Ms, l.clockResolutionMs)}`,
    `shards done ${l.shardsDone}/${l.shards}`,
    ...(view.lastError ? [`⚠ retrying: ${view.lastError}`] : []),
  ].join("  ");
}
