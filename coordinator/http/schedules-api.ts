/**
 * Scheduled runs over HTTP (docs/schedules.md). The cron tick that runs them is
 * coordinator/schedule/cron-tick.ts; the decisions are core/watch/.
 *
 *   POST   /v1/schedules             create (the run spec is admitted as POST /v1/runs admits it)
 *   GET    /v1/schedules             list
 *   GET    /v1/schedules/:id         one, with its latest turns, verdicts and webhook attempts
 *   POST   /v1/schedules/:id/pause   stop taking turns (they are not counted as missed)
 *   POST   /v1/schedules/:id/resume  take turns again, from the next one
 *   DELETE /v1/schedules/:id         delete it (its runs stay)
 *   GET    /v1/schedules/:id/trend   each run's headline figures and verdict, for the trend page
 *
 * Webhook secrets and paths are never shown after creation; a generated secret is shown
 * once, in the creation's answer. The spec is shown redacted, as a run's is.
 */
import { vaultOf } from "../schedule/schedule-vault.ts";
import { Hono, type Context } from "hono";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { redactSpec } from "../../core/spec/redact.ts";
import { randomHex } from "../../core/data/web-crypto.ts";
import { modeOf } from "../../core/spec/target-policy.ts";
import { nextAfter, parseCron, schedulePrice } from "../../core/watch/cron.ts";
import { parseScheduleInput, redactWebhook } from "../../core/watch/schedule-input.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { badRequest, notFound } from "./api-errors.ts";
import { checkRun } from "./run-admission.ts";
import { runRef } from "../store/baselines.ts";
import {
  deleteSchedule,
  getSchedule,
  insertSchedule,
  listSchedules,
  scheduleTrend,
  scheduleTurns,
  setPaused,
  webhookAttempts,
  webhooksOf,
  type ScheduleRow,
} from "../store/schedules.ts";

type App = { Bindings: RoutesEnv };

export const schedulesApi = new Hono<App>();

const SCHEDULE_ID = /^s-[0-9a-z]{6,12}-[0-9a-f]{8}$/;

schedulesApi.post("/", async (c) => {
  const body = await c.req.json().catch(() => {
    throw badRequest("the body must be a JSON schedule", [{ field: "(body)", detail: "not valid JSON" }]);
  });
  const parsed = parseScheduleInput(body, c.env.ALLOWED_WEBHOOKS, modeOf(c.env.EDGELOAD_MODE), newSecret);
  if (!parsed.ok) throw badRequest("bad schedule", parsed.problems);
  const input = parsed.schedule;
  // A schedule that could never run is refused now, with the run's own problems.
  const { estimate } = await checkRun(input.spec, c.env);
  if (input.baseline.kind === "pinned" && !(await runRef(c.env.DB, input.baseline.runId)))
    throw badRequest("bad schedule", [{ field: "baseline.runId", detail: `run ${input.baseline.runId} does not exist` }]);
  const nowMs = Date.now();
  const id = `s-${nowMs.toString(36)}-${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`;
  // The spec as given and the webhooks' keys go to the schedule's vault (Durable Object
  // storage); D1 keeps what may be shown: the spec redacted, the webhooks without keys.
  await vaultOf(c.env, id).put({ specJson: JSON.stringify(input.spec), webhooks: input.webhooks });
  const shown = parseRunSpec(input.spec);
  const row: ScheduleRow = {
    id,
    name: input.name,
    cron: input.cron.source,
    spec_json: JSON.stringify(shown.ok ? redactSpec(shown.spec) : null),
    baseline_run_id: input.baseline.kind === "pinned" ? input.baseline.runId : null,
    webhooks_json: JSON.stringify(input.webhooks.map(redactWebhook)),
    paused: 0,
    created_at: nowMs,
    next_due_ms: nextAfter(input.cron, nowMs),
    last_run_id: null,
  };
  await insertSchedule(c.env.DB, row);
  const price = { ...schedulePrice(input.cron, estimate.cost.totalUsd, nowMs), pricingDate: estimate.cost.pricingDate };
  // Generated secrets are shown here, once: the receiver needs them to check signatures.
  const webhookSecrets = input.generatedSecrets.map((i) => ({ webhook: i, secret: input.webhooks[i]!.secret }));
  c.header("location", linksOf(c, row.id).self);
  return c.json({ ...scheduleView(c, row), estimate: price, ...(webhookSecrets.length ? { webhookSecrets } : {}) }, 201);
});

schedulesApi.get("/", async (c) => {
  return c.json({ schedules: (await listSchedules(c.env.DB)).map((row) => scheduleView(c, row)) });
});

schedulesApi.get("/:id", async (c) => {
  const row = await scheduleOf(c);
  const [turns, attempts] = await Promise.all([scheduleTurns(c.env.DB, row.id, 50), webhookAttempts(c.env.DB, row.id, 50)]);
  return c.json({
    ...scheduleView(c, row),
    turns: turns.map((t) => ({
      dueAt: new Date(t.due_ms).toISOString(),
      takenAt: new Date(t.taken_at).toISOString(),
      outcome: t.outcome,
      missed: t.missed,
      detail: t.detail,
      runId: t.run_id,
      verdict: t.verdict,
      ...(t.verdict_json ? { reasons: JSON.parse(t.verdict_json).reasons, regressions: JSON.parse(t.verdict_json).regressions } : {}),
      baselineRunId: t.baseline_run_id,
    })),
    webhookAttempts: attempts.map((a) => ({
      runId: a.run_id,
      deliveryId: a.delivery_id,
      kind: a.kind,
      webhook: a.hook,
      attempt: a.attempt,
      at: new Date(a.at_ms).toISOString(),
      status: a.status,
      error: a.error,
    })),
  });
});

/** The trend page's data: each run's p50/p95/p99, error rate, achieved rate and verdict, oldest first. */
schedulesApi.get("/:id/trend", async (c) => {
  const row = await scheduleOf(c);
  const origin = new URL(c.req.url).origin;
  const runs = (await scheduleTrend(c.env.DB, row.id, 200)).map((r) => ({
    dueAt: new Date(r.due_ms).toISOString(),
    runId: r.run_id,
    status: r.status,
    verdict: r.verdict,
    p50Ms: r.p50_ms,
    p95Ms: r.p95_ms,
    p99Ms: r.p99_ms,
    errorRate: r.error_rate,
    ratePerS: r.rate_per_s,
    dashboard: `${origin}/v1/runs/${r.run_id}/dashboard`,
    baselineRunId: r.baseline_run_id,
    ...(r.baseline_run_id ? { compare: `${origin}/v1/runs/${r.baseline_run_id}/compare/${r.run_id}/dashboard` } : {}),
  }));
  return c.json({ id: row.id, name: row.name, cron: row.cron, runs });
});

for (const action of ["pause", "resume"] as const) {
  schedulesApi.post(`/:id/${action}`, async (c) => {
    const row = await scheduleOf(c);
    const cron = parseCron(row.cron);
    const next = action === "pause" || !cron.ok ? row.next_due_ms : nextAfter(cron.cron, Date.now());
    await setPaused(c.env.DB, row.id, action === "pause", next);
    return c.json(scheduleView(c, { ...row, paused: action === "pause" ? 1 : 0, next_due_ms: next }));
  });
}

schedulesApi.delete("/:id", async (c) => {
  const row = await scheduleOf(c);
  await deleteSchedule(c.env.DB, row.id);
  await vaultOf(c.env, row.id).forget();
  return c.body(null, 204);
});

async function scheduleOf(c: Context<App>): Promise<ScheduleRow> {
  const id = c.req.param("id") ?? "";
  const row = SCHEDULE_ID.test(id) ? await getSchedule(c.env.DB, id) : null;
  if (!row) throw notFound(`schedule ${id}`);
  return row;
}

/** A schedule as every answer shows it: spec redacted, webhooks without secrets or paths. */
function scheduleView(c: Context<App>, row: ScheduleRow) {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    timezone: "UTC",
    paused: row.paused === 1,
    nextDueAt: row.next_due_ms === null || row.paused ? null : new Date(row.next_due_ms).toISOString(),
    baseline: row.baseline_run_id ? { runId: row.baseline_run_id } : "rolling",
    lastRunId: row.last_run_id,
    createdAt: new Date(row.created_at).toISOString(),
    // Stored redacted (the spec as given is in the schedule's vault).
    spec: JSON.parse(row.spec_json) as unknown,
    webhooks: webhooksOf(row),
    links: linksOf(c, row.id),
  };
}

function linksOf(c: Context<App>, id: string) {
  const self = `${new URL(c.req.url).origin}/v1/schedules/${id}`;
  return { self, pause: `${self}/pause`, resume: `${self}/resume`, trend: `${self}/trend`, dashboard: `${self}/dashboard` };
}

/** 32 random bytes as hex: a webhook's HMAC key when the caller gives none. */
function newSecret(): string {
  return randomHex(32);
}
