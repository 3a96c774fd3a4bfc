/**
 * Plays a chaos schedule (scripts/bench/chaos/schedule.ts) over one run inside workerd and
 * observes what it left: the in-workerd half of `npm run bench -- chaos` (./chaos.seeds.ts)
 * and of the fixed seeds in `npm test` (test/workers-tree/chaos-seeds.test.ts). The run is
 * created (its setup killed under it, when the schedule says so), each fault injected at its
 * moment (./chaos-faults.ts), and the run watched until it is final or past its deadline
 * (scripts/bench/chaos/deadlines.ts); then what it left is read from the target's ledger,
 * D1, the API, the logs and what the target answered (./target-answers.ts).
 *
 * Needs a deployment with an aggregator fan-in of 2, the target's admin secret
 * (TARGET_ADMIN_SECRET, to read its request ledger), RESULT_WRITE_RETRIES at
 * CHAOS_RUN.resultWriteRetries, and the seed set of `uploadChaosSeed`.
 */
import { env } from "cloudflare:workers";
import { seedObjectKey } from "../../../../core/data/seed-set.ts";
import { FINAL_STATUSES } from "../../../../core/run/protocol.ts";
import type { ChaosObservation } from "../../chaos/invariants.ts";
import { runDeadlineMs, scheduleOverAtMs } from "../../chaos/deadlines.ts";
import { CHAOS_RUN, REGIONS, SHAPES, type ChaosSchedule } from "../../chaos/schedule.ts";
import { api, sleep } from "../../../../test/workers/helpers.ts";
import { CHAOS_SEED, forgetHooks, inject, killSetup, restoreWindowsTable, treeOf, type Played } from "./chaos-faults.ts";
import { failSeedReads, restoreSeedReads } from "./seed-reads.ts";
import { answersOf, watchAnswers, wrapFetch } from "./target-answers.ts";

/** Uploads the seed set every chaos run reads (so that R2 can be made to fail). */
export async function uploadChaosSeed(): Promise<void> {
  const users = Array.from({ length: 50 }, (_, i) => ({ email: `chaos-${i}@example.test`, userId: `u${i}` }));
  const response = await api(`/v1/seeds/${CHAOS_SEED}`, { method: "PUT", body: JSON.stringify({ users }) });
  if (!response.ok) throw new Error(`seed upload: ${response.status} ${await response.text()}`);
}

// --- Log lines: every console call of this isolate (the objects run in it), kept to be searched for secrets.
const logLines: string[] = [];
let consoleWrapped = false;
function captureConsole(): void {
  if (consoleWrapped) return;
  consoleWrapped = true;
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      logLines.push(args.map((a) => (typeof a === "string" ? a : (JSON.stringify(a) ?? String(a)))).join(" "));
      if (logLines.length > 20_000) logLines.splice(0, 10_000);
      original(...args);
    };
  }
}

const SECRET_PREFIX = "chaos-secret-";

/** Where any of `secrets` appears: the run's D1 rows, its API answers, the log lines since `fromLine`. */
async function secretsIn(runId: string, secrets: readonly string[], fromLine: number): Promise<string[]> {
  const found: string[] = [];
  const has = (text: string) => secrets.some((s) => text.includes(s));
  const tables = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{
    name: string;
  }>();
  for (const { name } of tables.results) {
    const columns = await env.DB.prepare(`SELECT name FROM pragma_table_info('${name}')`).all<{ name: string }>();
    if (!columns.results.some((c) => c.name === "run_id")) continue;
    const rows = await env.DB.prepare(`SELECT * FROM ${name} WHERE run_id = ?`).bind(runId).all();
    if (has(JSON.stringify(rows.results))) found.push(`D1 ${name}`);
  }
  for (const path of [`/v1/runs/${runId}`, `/v1/runs/${runId}/summary`]) if (has(await (await api(path)).text())) found.push(`GET ${path}`);
  if (logLines.slice(fromLine).some(has)) found.push("log lines");
  return found;
}

/** The chaos run's spec: its setup step, its one step, its secrets in a header of each. */
function chaosSpec(schedule: ChaosSchedule, name: string, secrets: readonly string[]): Record<string, unknown> {
  const headers = { "x-key": "{{secrets.token}}", authorization: `Bearer ${secrets[1]}` };
  return {
    name,
    target: env.TARGET_URL,
    executor: "constant-arrival-rate",
    rate: CHAOS_RUN.ratePerS,
    duration: `${CHAOS_RUN.durationMs / 1000}s`,
    timeout: `${CHAOS_RUN.timeoutMs / 1000}s`,
    // Iterations in progress at the end get the timeout, not k6's default 30 s gracefulStop:
    // a run whose shard went silent still ends within END_WITHIN_MS (end + 2 + 15 s).
    gracefulStop: `${CHAOS_RUN.timeoutMs / 1000}s`,
    shards: SHAPES[schedule.shape].shards,
    regions: [...REGIONS],
    data: { seed: CHAOS_SEED },
    secrets: { token: secrets[0] },
    // Long enough for the setup-killed fault to land in it.
    setup: [{ path: `/delay?ms=${CHAOS_RUN.setupDelayMs}`, headers, checks: [{ status: 200 }] }],
    steps: [{ path: "/delay?ms=5&user={{data.userId}}", headers, checks: [{ status: 200, bodyIncludes: '"ok":true' }] }],
  };
}

/**
 * Creates the run: through the API, as a user does — and, when the schedule kills its
 * setup, with the coordinator restarted under it meanwhile (chaos-faults.ts killSetup): the
 * API's answer is then whatever the broken call gave, and the run's t0 the planned one.
 */
async function createChaosRun(schedule: ChaosSchedule, secrets: readonly string[]): Promise<{ runId: string; t0Ms: number; createdMs: number }> {
  const name = `chaos ${schedule.shape} seed ${schedule.seed} ${crypto.randomUUID().slice(0, 8)}`;
  const requestedMs = Date.now();
  const created = api("/v1/runs", { method: "POST", body: JSON.stringify(chaosSpec(schedule, name, secrets)) });
  const killed = schedule.faults.find((f) => f.kind === "setup-killed");
  if (killed) {
    const run = await killSetup(name, killed.intoSetupMs);
    await created.catch(() => {});
    return run;
  }
  const response = await created;
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  const { id, startsAt } = (await response.json()) as { id: string; startsAt: string };
  // Its creation only matters to a run whose setup was killed: here, when it was asked for.
  return { runId: id, t0Ms: Date.parse(startsAt), createdMs: requestedMs };
}

/** The run's view once final; or, past its deadline with a margin, as it stands (`final` false). */
async function finalView(runId: string, t0Ms: number): Promise<{ view: Record<string, any>; final: boolean }> {
  const giveUpAt = runDeadlineMs(t0Ms) + 15_000;
  for (;;) {
    const view = (await (await api(`/v1/runs/${runId}`)).json()) as Record<string, any>;
    if (FINAL_STATUSES.includes(view.status)) return { view, final: true };
    if (Date.now() > giveUpAt) return { view, final: false };
    await sleep(200);
  }
}

/** Plays `schedule` over one run and observes it. */
export async function playSchedule(schedule: ChaosSchedule): Promise<ChaosObservation> {
  captureConsole();
  wrapFetch();
  await restoreWindowsTable();
  const fromLine = logLines.length;
  const shards = SHAPES[schedule.shape].shards;
  const secrets = [`${SECRET_PREFIX}${schedule.seed}-a${crypto.randomUUID()}`, `${SECRET_PREFIX}${schedule.seed}-b${crypto.randomUUID()}`];
  const seedKey = seedObjectKey(CHAOS_SEED);
  // The deadlines of a long D1 outage are computed from the chaos run's budget (scripts/bench/chaos/deadlines.ts).
  const budget = (env as unknown as { RESULT_WRITE_RETRIES?: string }).RESULT_WRITE_RETRIES;
  if (schedule.faults.some((f) => f.kind === "d1-refusing-long") && budget !== String(CHAOS_RUN.resultWriteRetries))
    throw new Error(
      `a long D1 outage needs RESULT_WRITE_RETRIES=${CHAOS_RUN.resultWriteRetries} (scripts/bench/chaos/vitest.config.ts); this deployment has ${budget ?? "the default"}`,
    );
  // From before the run exists, so that the shards' first loads meet it (seed-reads.ts).
  if (schedule.faults.some((f) => f.kind === "r2-throwing")) failSeedReads(seedKey);
  let injections: Promise<PromiseSettledResult<void>[]> = Promise.resolve([]);
  let runId: string | null = null;
  try {
    const created = await createChaosRun(schedule, secrets);
    runId = created.runId;
    watchAnswers(runId);
    const setupKilled = schedule.faults.some((f) => f.kind === "setup-killed");
    const played: Played = { runId, t0: created.t0Ms, tree: await treeOf(runId), setupKilled, abortedAt: null, stoppedAfterMs: null };
    injections = Promise.allSettled(schedule.faults.map((f) => inject(played, f, shards)));
    const { view, final } = await finalView(runId, created.t0Ms);
    const finalAtMs = final ? Date.now() : null;
    const failed = (await injections).filter((r) => r.status === "rejected");
    if (failed.length) throw new Error(`chaos: a fault could not be injected: ${(failed[0] as PromiseRejectedResult).reason}`);
    const read = await readStores(runId);
    return {
      schedule,
      runId,
      status: String(view.status),
      t0Ms: created.t0Ms,
      finalAtMs,
      ...read,
      shardsDone: Number(view.live?.shardsDone ?? 0),
      endedAfterMs: Math.max(0, (finalAtMs ?? Date.now()) - scheduleOverAtMs(schedule, created.t0Ms, created.createdMs)),
      stoppedAfterMs: played.stoppedAfterMs,
      fetched: answersOf(runId),
      secretsFound: await secretsIn(runId, secrets, fromLine),
    };
  } finally {
    await injections;
    if (runId) forgetHooks(runId);
    restoreSeedReads(seedKey);
    await restoreWindowsTable();
  }
}

/** What the run left in the stores: its summary, D1's windows and shard rows, the target's ledger. */
async function readStores(id: string): Promise<Pick<ChaosObservation, "received" | "stored" | "summary" | "shardRows">> {
  const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as {
    metrics: Record<string, { count: number }>;
    edgeload: { totals: { sent: number; dropped: number; interrupted: number; notSent?: { share: number; bound: number } } };
  };
  const stored = (await env.DB.prepare(
    `SELECT COALESCE(SUM(sent), 0) AS sent, COALESCE(SUM(dropped), 0) AS dropped, COALESCE(SUM(requests), 0) AS requests,
            COALESCE(SUM(connection_errors), 0) AS connectionErrors, COALESCE(SUM(timeouts), 0) AS timeouts,
            COALESCE(SUM(status_5xx), 0) AS status5xx, COALESCE(SUM(checks_failed), 0) AS checksFailed FROM windows WHERE run_id = ?`,
  )
    .bind(id)
    .first<ChaosObservation["stored"]>())!;
  const shardRows = (await env.DB.prepare("SELECT COUNT(*) AS count, COALESCE(SUM(requests), 0) AS requests FROM shards WHERE run_id = ?")
    .bind(id)
    .first<ChaosObservation["shardRows"]>())!;
  const ledger = await fetch(`${env.TARGET_URL}/api/admin/test/request-ledger?run=${id}`, {
    headers: { authorization: `Bearer ${env.TARGET_ADMIN_SECRET}` },
  });
  if (!ledger.ok) throw new Error(`request ledger: ${ledger.status} ${await ledger.text()}`);
  const received = ((await ledger.json()) as { rows: Array<{ count: number }> }).rows.reduce((a, r) => a + r.count, 0);
  const totals = summary.edgeload.totals;
  return {
    received,
    stored,
    summary: {
      sent: totals.sent,
      dropped: totals.dropped,
      requests: summary.metrics.http_reqs?.count ?? 0,
      interrupted: totals.interrupted,
      notSent: totals.notSent ? { share: totals.notSent.share, bound: totals.notSent.bound } : null,
    },
    shardRows,
  };
}
