/**
 * A schedule left alone for a simulated week: the Worker's `scheduled` handler driven every
 * 15 minutes of virtual time (the tick's time passed in) over seven days of a twice-daily
 * cron, while the loopback target (test/workers/watch-server.ts) fails, recovers, is refused
 * a turn by the deployment's MAX_CONCURRENT_RUNS, goes away and comes back; the Worker's own
 * cron stops for a day's worth of turns; and the webhook receivers are down for an hour,
 * lose one answer, or never come back at all.
 *
 * What a user needs of it: every turn has exactly one outcome; every turn that did not pass
 * reaches the receiver exactly once (the receiver drops a delivery id it has seen, as
 * docs/schedules.md tells it to), retried across ticks through the outage; a recovery follows
 * each bad streak, to the webhooks that heard it; and an alert that cannot be delivered in
 * 24 h is abandoned where `GET /v1/schedules/:id` shows it.
 *
 * Runs are small (1 s at 20 requests/s from one shard) and each is waited for in real time
 * before virtual time moves on, so the week takes well under two minutes.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../coordinator/index.ts";
import { api, spec, waitForStatus } from "./helpers.ts";

const WATCH = env.WATCH_SERVER_URL;
const SECRET = "a-webhook-secret-of-32-characters";
const MIN = 60_000;
const TURN_MS = 12 * 60 * MIN;

async function tick(scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/**
 * A call to the loopback server, tried again once when the connection drops: the server closes
 * idle keep-alive connections after a second, and workerd may pick one up just then.
 */
async function watch(path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${WATCH}${path}`, init);
  } catch {
    return fetch(`${WATCH}${path}`, init);
  }
}

const control = async (path: string) => expect((await watch(`/control/${path}`, { method: "POST" })).status).toBe(200);

interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly status: number;
  readonly duplicate: boolean;
  readonly processed: boolean;
}

async function received(path: string): Promise<Received[]> {
  return ((await (await watch("/control/hooks")).json()) as Received[]).filter((d) => d.path === path);
}

async function hmacHex(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The runs that fill the deployment's MAX_CONCURRENT_RUNS (4 in the workers config) while a turn comes. */
async function fillRunSlots(key: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    const body = spec({ name: `filler ${i}`, target: WATCH, steps: [{ path: `/slow/${key}-filler` }], rate: 1, duration: "10m", shards: 1, regions: ["wnam"] });
    const created = await api("/v1/runs", { method: "POST", body: JSON.stringify(body) });
    expect(created.status).toBe(201);
    ids.push(((await created.json()) as { id: string }).id);
  }
  return ids;
}

interface Turn {
  readonly dueAt: string;
  readonly outcome: string;
  readonly missed: number;
  readonly verdict: string | null;
  readonly detail: string | null;
  readonly runId: string | null;
}

/**
 * What a webhook should have heard, worked out from the turns as they came out (the test's
 * own model of docs/schedules.md, not the product's code): every kind it listens for, and
 * `recovered` at the first passing turn after a streak in which it heard something.
 */
function expectedAlerts(turns: readonly Turn[], hears: (kind: string) => boolean): [string, string][] {
  const alerts: [string, string][] = [];
  let heard = false;
  for (const t of turns) {
    const kinds = t.outcome === "started" ? [...(t.missed ? ["missed"] : []), t.verdict!] : [t.outcome];
    for (const kind of kinds) {
      if (kind === "passed") {
        if (heard) alerts.push([t.dueAt, "recovered"]);
        heard = false;
      } else if (hears(kind)) {
        alerts.push([t.dueAt, kind]);
        heard = true;
      }
    }
  }
  return alerts;
}

describe("a schedule left alone for a week", () => {
  it("gives every turn one outcome and every non-pass one delivered alert, through outages, with recoveries", { timeout: 150_000 }, async () => {
    const key = crypto.randomUUID();
    const hooks = { json: `/hook/${key}-json`, slack: `/hook/${key}-slack`, gone: `/hook/${key}-gone` };
    const created = await api("/v1/schedules", {
      method: "POST",
      body: JSON.stringify({
        name: "week",
        cron: "0 */12 * * *",
        spec: spec({
          name: "week",
          target: WATCH,
          steps: [{ path: `/slow/${key}` }],
          rate: 20,
          duration: "1s",
          shards: 1,
          regions: ["wnam"],
          thresholds: { http_req_failed: ["rate<0.5"] },
        }),
        webhooks: [
          // The default `on`: every turn that does not pass.
          { url: `${WATCH}${hooks.json}`, secret: SECRET },
          // failed hears refusals too, not missed turns.
          { url: `${WATCH}${hooks.slack}`, format: "slack", secret: SECRET, on: ["failed"] },
          // A receiver that never comes back: its alerts are abandoned after 24 h.
          { url: `${WATCH}${hooks.gone}`, secret: SECRET, on: ["refused"] },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const s = (await created.json()) as Record<string, any>;
    const t0 = Date.parse(s.nextDueAt);
    const turnAt = (n: number) => t0 + n * TURN_MS;
    await control(`receiver?key=${key}-gone&mode=down`);
    // 100 ms a request: a machine busy with other tests adds a few ms, well within compare's noise floor (5 %).
    await control(`delay?key=${key}&ms=100`);

    // What happens at each turn (the index of the cron's turn from t0), set before its tick.
    const before: Record<number, () => Promise<unknown>> = {
      2: () =>
        Promise.all([control(`target?key=${key}&mode=fail`), control(`receiver?key=${key}-json&mode=down`), control(`receiver?key=${key}-slack&mode=down`)]),
      4: () => control(`target?key=${key}&mode=ok`),
      10: () => control(`target?key=${key}&mode=away`),
      12: () => Promise.all([control(`target?key=${key}&mode=ok`), control(`receiver?key=${key}-json&mode=ack-lost`)]),
    };
    // The receivers are down for the first hour of turn 2; the Worker's cron stops from turn 7 to an hour after turn 8.
    const receiversBack = turnAt(2) + 60 * MIN;
    const workerDown = (t: number) => t >= turnAt(7) && t < turnAt(8) + 60 * MIN;
    let fillers: string[] = [];

    for (let t = t0; t <= turnAt(14) + 60 * MIN; t += 15 * MIN) {
      const turn = (t - t0) / TURN_MS;
      if (Number.isInteger(turn)) await before[turn]?.();
      if (turn === 5) fillers = await fillRunSlots(key);
      if (t === receiversBack) await Promise.all([control(`receiver?key=${key}-json&mode=up`), control(`receiver?key=${key}-slack&mode=up`)]);
      if (workerDown(t)) continue;
      await tick(t);
      if (turn === 5) await Promise.all(fillers.map((id) => api(`/v1/runs/${id}/abort`, { method: "POST" }).then(() => waitForStatus(id))));
      // A turn's run ends in real time before virtual time moves on (a run is judged at the next tick).
      const latest = (await (await api(`/v1/schedules/${s.id}`)).json()) as { turns: { runId: string | null; verdict: string | null }[] };
      const going = latest.turns[0];
      if (going?.runId && going.verdict === null) await waitForStatus(going.runId);
    }

    const view = (await (await api(`/v1/schedules/${s.id}`)).json()) as Record<string, any>;
    const turns = [...view.turns].reverse() as Turn[];
    // Every turn exactly once, with one outcome; the two the Worker's outage swallowed are one missed turn counting both.
    const due = (n: number) => new Date(turnAt(n)).toISOString();
    const forced: Record<number, [string, string | null]> = { 2: ["started", "failed"], 3: ["started", "failed"], 5: ["refused", null], 8: ["missed", null] };
    Object.assign(forced, { 10: forced[2], 11: forced[2] });
    const dueTurns = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14];
    expect(turns.map((x) => x.dueAt)).toEqual(dueTurns.map(due));
    turns.forEach((x, i) => {
      const [outcome, verdict] = forced[dueTurns[i]!] ?? ["started", null];
      expect(x.outcome).toBe(outcome);
      // A healthy turn passes, unless this busy machine made one run's tail slower than compare's noise floor: regressed.
      if (verdict) expect(x.verdict).toBe(verdict);
      else if (outcome === "started") expect(["passed", "regressed"]).toContain(x.verdict);
      else expect(x.verdict).toBeNull();
    });
    expect(turns[0]!.verdict).toBe("passed"); // the first run has no baseline: its thresholds decide
    expect(turns[5]!.detail).toContain("this deployment allows 4 concurrent runs");
    expect(turns[7]!.missed).toBe(2);

    // The default webhook: every turn that did not pass once, processed (the receiver dropped the one replay),
    // and a recovery at the first passing turn after each streak.
    const json = await received(hooks.json);
    const processed = json.filter((d) => d.processed).map((d) => JSON.parse(d.body));
    const everyNonPass = expectedAlerts(turns, () => true);
    expect(processed.map((b) => [b.dueAt, b.verdict])).toEqual(everyNonPass);
    expect(everyNonPass.filter(([, kind]) => kind === "recovered").length).toBeGreaterThanOrEqual(2);
    expect(new Set(processed.map((b) => b.deliveryId)).size).toBe(processed.length);
    const alertOf = (n: number, kind: string) => processed.find((b) => b.dueAt === due(n) && b.verdict === kind);
    expect(alertOf(5, "refused")).toMatchObject({ run: null, turn: { outcome: "refused" }, reasons: [expect.stringContaining("concurrent runs")] });
    expect(alertOf(8, "missed")).toMatchObject({
      run: null,
      turn: { outcome: "missed", missed: 2 },
      reasons: [expect.stringMatching(/^2 turn\(s\) went by without a run/)],
    });
    for (const b of processed.filter((x) => x.verdict === "recovered")) expect(b.reasons[0]).toMatch(/^passed after \d+ turn\(s\) that did not, since /);
    if (turns[6]!.verdict === "passed" && turns[8]!.verdict === "passed")
      expect(alertOf(9, "recovered").reasons[0]).toBe(`passed after 2 turn(s) that did not, since ${due(8)}`);
    // Its answer lost once, the first alert after turn 12 came twice with one delivery id: the receiver processed it once.
    const replays = json.filter((d) => d.duplicate);
    expect(replays).toHaveLength(1);
    expect(processed.filter((b) => b.deliveryId === replays[0]!.headers["x-edgeload-delivery"])).toHaveLength(1);
    // Each delivery is signed over its raw body, delivery id and time included.
    for (const d of json.slice(0, 3))
      expect(d.headers["x-edgeload-signature"]).toBe(`v1=${await hmacHex(SECRET, `${d.headers["x-edgeload-timestamp"]}.${d.body}`)}`);

    // Turn 2's failure was raised while the receiver was down: retried across ticks, delivered when it came back.
    // (Read from D1: the schedule's view shows the latest 50 attempts, and the week made more.)
    const { results: attempts } = await env.DB.prepare("SELECT * FROM webhook_attempts WHERE schedule_id = ? ORDER BY at_ms, attempt")
      .bind(s.id)
      .all<{ hook: number; kind: string; status: number | null; error: string | null; at_ms: number; run_id: string | null; delivery_id: string }>();
    const failure = attempts.filter((a) => a.hook === 0 && a.run_id === turns[2]!.runId);
    expect(failure.map((a) => a.status)).toEqual([null, null, null, 200]);
    expect(failure.at(-1)!.at_ms).toBe(receiversBack);
    expect(new Set(failure.map((a) => a.delivery_id)).size).toBe(1);

    // `on: ["failed"]` heard the failures and the refusal, and the recoveries from them, but not the missed turns or regressions.
    const slack = (await received(hooks.slack)).filter((d) => d.status === 200).map((d) => JSON.parse(d.body).text as string);
    const failedOrRefused = expectedAlerts(turns, (kind) => kind === "failed" || kind === "refused");
    expect(slack.map((text) => text.match(/\*(\w+)\*$/m)?.[1])).toEqual(failedOrRefused.map(([, kind]) => kind));
    expect(slack.slice(0, 2).map((text) => text.match(/\*(\w+)\*$/m)?.[1])).toEqual(["failed", "failed"]);
    expect(slack.some((text) => /\*(missed|regressed)\*$/m.test(text))).toBe(false);
    expect((await received(hooks.slack)).every((d) => /^[0-9a-f-]{36}$/.test(d.headers["x-edgeload-delivery"]!))).toBe(true);

    // In the outbox: every alert of the week delivered, but those to the receiver that never came back.
    const { results: outbox } = await env.DB.prepare(
      "SELECT hook, kind, created_at, delivered_at IS NOT NULL AS delivered, abandoned_at IS NOT NULL AS abandoned FROM alert_outbox WHERE schedule_id = ? ORDER BY created_at, hook",
    )
      .bind(s.id)
      .all<{ hook: number; kind: string; created_at: number; delivered: number; abandoned: number }>();
    expect(outbox.filter((a) => a.hook !== 2).every((a) => a.delivered === 1 && a.abandoned === 0)).toBe(true);
    expect(outbox.filter((a) => a.hook === 0)).toHaveLength(everyNonPass.length);
    // The receiver that never came back: its refusal (and a recovery raised early enough) abandoned after 24 h, and saying so.
    const gone = outbox.filter((a) => a.hook === 2);
    expect(gone.map((a) => a.kind)).toEqual(expectedAlerts(turns, (kind) => kind === "refused").map(([, kind]) => kind));
    expect(gone.every((a) => a.delivered === 0)).toBe(true);
    expect(gone[0]).toMatchObject({ kind: "refused", abandoned: 1 });
    const abandoned = attempts.filter((a) => a.hook === 2 && /abandoned/.test(a.error ?? ""));
    expect(abandoned[0]).toMatchObject({
      kind: "refused",
      status: null,
      error: expect.stringMatching(/; abandoned: not delivered within 24 h \(\d+ attempts\)$/),
    });
    expect(abandoned[0]!.at_ms - gone[0]!.created_at).toBeLessThanOrEqual(24 * 60 * MIN);
    expect(await received(hooks.gone)).toEqual([]);
  });
});
