/**
 * Scheduled runs end to end in workerd: the Worker's `scheduled` handler driven turn by
 * turn (createScheduledController, the tick's time passed in), runs against a loopback
 * target whose delay the test raises between turns, and the verdict delivered to a
 * loopback webhook receiver, signed (test/workers/watch-server.ts).
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../coordinator/index.ts";
import { cronTick } from "../../coordinator/schedule/cron-tick.ts";
import { api, spec, waitForStatus } from "./helpers.ts";

const WATCH = env.WATCH_SERVER_URL;
const SECRET = "a-webhook-secret-of-32-characters";
const SPEC_SECRET = "a-spec-secret-only-the-vault-keeps";

/** One cron tick at `scheduledTime`, waited on to the end of its webhook deliveries. */
async function tick(scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

const control = (path: string) => fetch(`${WATCH}/control/${path}`, { method: "POST" });

async function deliveries(path: string): Promise<{ path: string; headers: Record<string, string>; body: string; status: number }[]> {
  const all = (await (await fetch(`${WATCH}/control/hooks`)).json()) as { path: string; headers: Record<string, string>; body: string; status: number }[];
  return all.filter((d) => d.path === path);
}

async function hmacHex(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function schedule(id: string): Promise<Record<string, any>> {
  return (await api(`/v1/schedules/${id}`)).json();
}

describe("scheduled runs", () => {
  it("runs two turns, skips one while a run goes on, and alerts a signed regression to a loopback webhook", async () => {
    await control("delay?ms=5");
    const hook = `/hook/${crypto.randomUUID()}`;
    const slack = `/hook/${crypto.randomUUID()}`;
    const created = await api("/v1/schedules", {
      method: "POST",
      body: JSON.stringify({
        name: "nightly slow",
        cron: "* * * * *",
        spec: spec({
          name: "scheduled",
          target: WATCH,
          steps: [{ path: "/slow", headers: { "x-api-key": "{{secrets.apiKey}}" }, checks: [{ status: 200 }] }],
          secrets: { apiKey: SPEC_SECRET },
          rate: 40,
          duration: "2s",
        }),
        webhooks: [
          { url: `${WATCH}${hook}`, secret: SECRET, on: ["passed", "regressed", "failed", "inconclusive"] },
          { url: `${WATCH}${slack}`, format: "slack" },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const s = (await created.json()) as Record<string, any>;
    // Secrets and webhook paths are never shown again; a generated one is shown once, here.
    expect(s.webhooks).toEqual([
      { url: `${WATCH}/…`, format: "json", secret: "(redacted)", on: ["passed", "regressed", "failed", "inconclusive"] },
      { url: `${WATCH}/…`, format: "slack", secret: "(redacted)", on: ["regressed", "failed", "inconclusive"] },
    ]);
    expect(s.webhookSecrets).toEqual([{ webhook: 1, secret: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    // D1 holds no secret of a schedule: they live in its vault (Durable Object storage), so
    // SQL over the schedules table reads the spec redacted and the webhooks keyless.
    const sql = await api("/v1/sql", {
      method: "POST",
      body: JSON.stringify({ sql: "SELECT spec_json, webhooks_json FROM schedules" }),
      token: "read-token-of-at-least-32-characters",
    });
    expect(sql.status).toBe(200);
    const rows = await sql.text();
    expect(rows).toContain("(redacted)");
    for (const secret of [SECRET, SPEC_SECRET, s.webhookSecrets[0].secret, "/hook/"]) expect(rows).not.toContain(secret);
    expect(s.estimate.turnsPer30Days).toBe(43_200);
    const t1 = Date.parse(s.nextDueAt);

    // Turn 1: a run at 5 ms.
    await tick(t1);
    const run1 = (await schedule(s.id)).turns[0];
    expect(run1).toMatchObject({ outcome: "started", missed: 0, verdict: null });
    expect((await waitForStatus(run1.runId)).status).toBe("passed");

    // The target gets slower; turn 2 judges run 1 (the first: passed, no baseline) and starts run 2.
    await control("delay?ms=60");
    await tick(t1 + 60_000);
    let view = await schedule(s.id);
    const run2 = view.turns[0];
    expect(run2).toMatchObject({ outcome: "started" });
    expect(view.turns[1]).toMatchObject({ runId: run1.runId, verdict: "passed", baselineRunId: null });

    // Turn 3 comes while run 2 is still going: skipped, it says which run holds it, and it alerts.
    await tick(t1 + 120_000);
    expect((await schedule(s.id)).turns[0]).toMatchObject({
      outcome: "skipped",
      runId: null,
      detail: `the previous run ${run2.runId} of this schedule is still going`,
    });
    expect((await waitForStatus(run2.runId)).status).toBe("passed");

    // Turn 4 (the schedule paused, so no new run) judges run 2 against run 1: regressed.
    // The receiver refuses the first delivery: it stays in the outbox and the next tick retries it.
    expect((await api(`/v1/schedules/${s.id}/pause`, { method: "POST" })).status).toBe(200);
    await control(`fail?key=${hook.slice("/hook/".length)}&n=1`);
    await tick(t1 + 180_000);
    view = await schedule(s.id);
    expect(view.turns.map((t: { outcome: string }) => t.outcome)).toEqual(["skipped", "started", "started"]);
    expect(view.turns[1]).toMatchObject({ runId: run2.runId, verdict: "regressed", baselineRunId: run1.runId });
    expect((await deliveries(hook)).map((d) => [JSON.parse(d.body).verdict, d.status])).toEqual([
      ["passed", 200],
      ["skipped", 200],
      ["regressed", 503],
    ]);
    // Not before its backoff (a minute) has passed: a tick 30 s later leaves it waiting.
    await tick(t1 + 210_000);
    expect(await deliveries(hook)).toHaveLength(3);
    await tick(t1 + 240_000);

    const received = await deliveries(hook);
    expect(received.map((d) => [JSON.parse(d.body).verdict, d.status])).toEqual([
      ["passed", 200],
      ["skipped", 200],
      ["regressed", 503],
      ["regressed", 200],
    ]);
    // A retry is the same alert: the same delivery id, in the header and in the signed body.
    const [refusedOnce, alert] = [received[2]!, received[3]!];
    expect(alert.headers["x-edgeload-delivery"]).toBe(refusedOnce.headers["x-edgeload-delivery"]);
    expect(JSON.parse(alert.body).deliveryId).toBe(alert.headers["x-edgeload-delivery"]);
    expect(Date.parse(JSON.parse(alert.body).sentAt)).toBeGreaterThanOrEqual(Date.parse(JSON.parse(refusedOnce.body).sentAt));
    const body = JSON.parse(alert.body);
    expect(body).toMatchObject({ type: "edgeload.scheduled-run.verdict", schedule: { id: s.id }, run: { id: run2.runId }, baselineRunId: run1.runId });
    const p50 = body.regressions.find((r: { region: string; metric: string }) => r.region === "all" && r.metric === "p50");
    expect(p50.baseline).toBeLessThan(30);
    expect(p50.candidate).toBeGreaterThan(55);
    // Signed: HMAC-SHA256 over "<timestamp>.<raw body>", with a fresh timestamp.
    const timestamp = alert.headers["x-edgeload-timestamp"]!;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(alert.headers["x-edgeload-signature"]).toBe(`v1=${await hmacHex(SECRET, `${timestamp}.${alert.body}`)}`);
    // The Slack hook asked for everything but passed: the skipped turn, then the regression.
    const slackBodies = (await deliveries(slack)).map((d) => JSON.parse(d.body).text as string);
    expect(slackBodies).toHaveLength(2);
    expect(slackBodies[0]).toBe(
      `:fast_forward: edgeload schedule *nightly slow*: turn of ${new Date(t1 + 120_000).toISOString()} *skipped*\n• the previous run ${run2.runId} of this schedule is still going`,
    );
    expect(slackBodies[1]).toMatch(new RegExp(`run <.*\\|${run2.runId}> \\*regressed\\* \\(baseline ${run1.runId}\\)\\n• all p50`));
    expect(slackBodies[1]!.split("\n").length).toBeGreaterThan(1);
    const slackAlert = (await deliveries(slack))[1]!;
    expect(await hmacHex(s.webhookSecrets[0].secret, `${slackAlert.headers["x-edgeload-timestamp"]}.${slackAlert.body}`)).toBe(
      slackAlert.headers["x-edgeload-signature"]!.slice(3),
    );
    // Slack's body has no room for it; the delivery id rides in the header.
    expect(slackAlert.headers["x-edgeload-delivery"]).toMatch(/^[0-9a-f-]{36}$/);

    // Every attempt is logged; nothing shown carries a secret.
    view = await schedule(s.id);
    expect(
      view.webhookAttempts
        .filter((a: { runId: string; webhook: number }) => a.runId === run2.runId && a.webhook === 0)
        .map((a: { status: number }) => a.status),
    ).toEqual([200, 503]);
    const text = JSON.stringify([view, await (await api("/v1/schedules")).json()]);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(hook);
    expect(text).not.toContain(s.webhookSecrets[0].secret);

    // The trend page's data: one point per run, oldest first, with its figures and verdict.
    const trend = (await (await api(`/v1/schedules/${s.id}/trend`)).json()) as { runs: Record<string, any>[] };
    expect(trend.runs.map((r) => [r.runId, r.verdict])).toEqual([
      [run1.runId, "passed"],
      [run2.runId, "regressed"],
    ]);
    expect(trend.runs[1]!.p95Ms).toBeGreaterThan(trend.runs[0]!.p95Ms + 40);
    expect(trend.runs[0]).toMatchObject({ errorRate: 0, ratePerS: expect.any(Number) });
    expect(trend.runs[1]).toMatchObject({
      baselineRunId: run1.runId,
      compare: expect.stringContaining(`/v1/runs/${run1.runId}/compare/${run2.runId}/dashboard`),
    });
    expect(await (await api(`/v1/runs/${run1.runId}/compare/${run2.runId}/dashboard`)).text()).toContain('src="/dashboard/compare.js');
    const pageHtml = await (await api(`/v1/schedules/${s.id}/dashboard`)).text();
    expect(pageHtml).toContain('<script type="module" src="/dashboard/schedule.js');

    expect((await api(`/v1/schedules/${s.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/v1/schedules/${s.id}`)).status).toBe(404);
  });

  it("ends a run stuck past its deadline, skipping the turns behind it until then, and alerts both", async () => {
    const key = crypto.randomUUID();
    const hook = `/hook/${key}`;
    const created = await api("/v1/schedules", {
      method: "POST",
      body: JSON.stringify({
        name: "stuck",
        cron: "*/30 * * * *",
        // 45 minutes planned: in the cron's time (passed in) it outlives the next turn and then its deadline,
        // while in real time the watchdog stops it seconds after it started.
        spec: spec({ name: "stuck", target: WATCH, steps: [{ path: `/slow/${key}` }], rate: 2, duration: "45m", shards: 1, regions: ["wnam"] }),
        webhooks: [{ url: `${WATCH}${hook}`, secret: SECRET }],
      }),
    });
    expect(created.status).toBe(201);
    const s = (await created.json()) as Record<string, any>;
    const t1 = Date.parse(s.nextDueAt);
    const minutes = (n: number) => t1 + n * 60_000;

    await tick(t1);
    const stuck = (await schedule(s.id)).turns[0];
    expect(stuck).toMatchObject({ outcome: "started" });
    // The next turn comes while it goes on: skipped, naming the run.
    await tick(minutes(30));
    expect((await schedule(s.id)).turns[0]).toMatchObject({ outcome: "skipped", detail: `the previous run ${stuck.runId} of this schedule is still going` });
    // At its planned end + 10 min it may still be finishing…
    await tick(minutes(55));
    expect((await schedule(s.id)).turns[1]).toMatchObject({ runId: stuck.runId, verdict: null });
    // …past that, the watchdog stops it through its coordinator and judges the turn failed, saying why.
    await tick(minutes(55) + 1);
    const judged = (await schedule(s.id)).turns[1];
    expect(judged).toMatchObject({ runId: stuck.runId, verdict: "failed" });
    expect(judged.reasons).toEqual([
      `watchdog: run did not end by its deadline (${new Date(minutes(55)).toISOString()}: its planned end + 10 min)`,
      "its coordinator is stopping it: the run ends aborted",
    ]);
    const ended = await waitForStatus(stuck.runId);
    expect(ended).toMatchObject({ status: "aborted", abortReason: expect.stringContaining("watchdog: run did not end by its deadline") });

    // The schedule is no longer held back: the next turn starts a run.
    await tick(minutes(60));
    const next = (await schedule(s.id)).turns[0];
    expect(next).toMatchObject({ outcome: "started", runId: expect.not.stringMatching(stuck.runId) });
    expect((await api(`/v1/runs/${next.runId}/abort`, { method: "POST" })).status).toBe(202);
    expect(await deliveries(hook).then((all) => all.map((d) => [JSON.parse(d.body).verdict, JSON.parse(d.body).reasons[0], d.status]))).toEqual([
      ["skipped", `the previous run ${stuck.runId} of this schedule is still going`, 200],
      ["failed", expect.stringMatching(/^watchdog: run did not end by its deadline/), 200],
    ]);
    await waitForStatus(next.runId);
    expect((await api(`/v1/schedules/${s.id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("keeps an alert in the outbox while the schedule's vault cannot be read, and delivers it at a later tick", async () => {
    const key = crypto.randomUUID();
    const hook = `/hook/${key}`;
    const created = await api("/v1/schedules", {
      method: "POST",
      body: JSON.stringify({ name: "vault down", cron: "* * * * *", spec: spec(), webhooks: [{ url: `${WATCH}${hook}`, secret: SECRET }] }),
    });
    const s = (await created.json()) as Record<string, any>;
    const t1 = Date.parse(s.nextDueAt);
    // The vault's Durable Object throws on every read for this tick: the turn cannot read its spec
    // (refused, and alerting), and the alert cannot be signed.
    const unreadable = { get: () => Promise.reject(new Error("vault unavailable")) };
    const brokenEnv = { ...env, SCHEDULE_VAULT: { idFromName: () => ({}), get: () => unreadable } } as unknown as typeof env;
    const ctx = createExecutionContext();
    await cronTick(brokenEnv, t1, { admit: () => Promise.reject(new Error("not reached")), waitUntil: (p) => ctx.waitUntil(p) });
    await waitOnExecutionContext(ctx);
    expect((await schedule(s.id)).turns[0]).toMatchObject({ outcome: "refused" });
    const { results: outbox } = await env.DB.prepare("SELECT kind, attempts, next_attempt_at, delivered_at, last_error FROM alert_outbox WHERE schedule_id = ?")
      .bind(s.id)
      .all();
    expect(outbox).toEqual([
      {
        kind: "refused",
        attempts: 1,
        next_attempt_at: t1 + 60_000,
        delivered_at: null,
        last_error: "the schedule's vault could not be read (vault unavailable)",
      },
    ]);
    expect(await deliveries(hook)).toEqual([]);

    // A minute later, the vault answers: the same alert is delivered.
    expect((await api(`/v1/schedules/${s.id}/pause`, { method: "POST" })).status).toBe(200);
    await tick(t1 + 60_000);
    const received = await deliveries(hook);
    expect(received.map((d) => [JSON.parse(d.body).verdict, d.status])).toEqual([["refused", 200]]);
    const view = await schedule(s.id);
    expect(view.webhookAttempts.map((a: { status: number | null; error: string | null }) => [a.status, a.error])).toEqual([
      [200, null],
      [null, "the schedule's vault could not be read (vault unavailable)"],
    ]);
    expect((await api(`/v1/schedules/${s.id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("refuses at creation a webhook host outside the allow-list, and a target outside it", async () => {
    const body = (over: Record<string, unknown>) =>
      JSON.stringify({ name: "refused", cron: "0 3 * * *", spec: spec(), webhooks: [{ url: "https://hooks.example.com/services/x" }], ...over });
    const refused = await api("/v1/schedules", { method: "POST", body: body({}) });
    expect(refused.status).toBe(400);
    const problem = (await refused.json()) as { problems: { field: string; detail: string }[] };
    expect(problem.problems).toEqual([
      { field: "webhooks[0].url", detail: expect.stringContaining("https://hooks.example.com is not an allowed webhook host") },
    ]);

    const offTarget = await api("/v1/schedules", { method: "POST", body: body({ webhooks: [], spec: spec({ target: "https://example.com" }) }) });
    expect(offTarget.status).toBe(403);
    expect(((await offTarget.json()) as { type: string }).type).toMatch(/target-not-allowed$/);

    const names = ((await (await api("/v1/schedules")).json()) as { schedules: { name: string }[] }).schedules.map((x) => x.name);
    expect(names).not.toContain("refused");

    // A read-only token reads schedules but cannot make one.
    expect((await api("/v1/schedules", { method: "POST", body: body({ webhooks: [] }), token: "read-token-of-at-least-32-characters" })).status).toBe(403);
  });
});
