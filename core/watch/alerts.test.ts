import { describe, expect, it } from "vitest";
import { hmacSha256Hex } from "../data/web-crypto.ts";
import { heardInStreak, selects, turnAlerts, type AlertKind, type HookAlert, type WebhookOnKind } from "./alert-rule.ts";
import { parseScheduleInput } from "./schedule-input.ts";
import { isOverdue, runDeadlineMs, WATCHDOG_REASON, watchdogReason } from "./watchdog.ts";
import { alertReasons, deliveryHeaders, deliveryStep, GIVE_UP_AFTER_MS, webhookBody, type AlertEvent } from "./webhook.ts";

const MIN = 60_000;
const DEFAULT_ON: WebhookOnKind[] = ["regressed", "failed", "inconclusive"];

describe("selects: which kinds an `on` list hears", () => {
  it.each([
    // [on, kind, heard, why]
    [DEFAULT_ON, "refused", true, "the default (and every list written before turn kinds existed) hears a refusal through failed"],
    [DEFAULT_ON, "skipped", true, "… a skipped turn through inconclusive"],
    [DEFAULT_ON, "missed", true, "… missed turns through inconclusive"],
    [DEFAULT_ON, "passed", false, "the default does not hear passes"],
    [["failed"], "refused", true, "failed: a turn that could not run needs the same action as a failure"],
    [["failed"], "skipped", false, "failed alone does not hear a turn without a result"],
    [["inconclusive"], "refused", false, "inconclusive alone does not hear refusals"],
    [["refused"], "refused", true, "a turn kind can be chosen by itself"],
    [["refused"], "failed", false, "… and then nothing else"],
    [["passed", "failed", "regressed", "inconclusive"], "recovered", false, "recovered is never chosen in on: it follows the streak"],
  ] satisfies [WebhookOnKind[], AlertKind, boolean, string][])("%j hears %s: %s (%s)", (on, kind, heard, _why) => {
    expect(selects(on, kind)).toBe(heard);
  });
});

describe("turnAlerts: which webhooks a turn alerts, as what", () => {
  const hooks = [{ on: DEFAULT_ON }, { on: ["passed"] as WebhookOnKind[] }, { on: ["refused"] as WebhookOnKind[] }];
  it.each([
    // [kind, webhooks that heard the streak, alerts, why]
    ["failed", [], [{ hook: 0, kind: "failed" }], "a failure: the webhook listening for failures"],
    [
      "refused",
      [],
      [
        { hook: 0, kind: "refused" },
        { hook: 2, kind: "refused" },
      ],
      "a refusal: through failed, and the one that chose refused",
    ],
    ["skipped", [], [{ hook: 0, kind: "skipped" }], "a skipped turn: through inconclusive"],
    ["passed", [], [{ hook: 1, kind: "passed" }], "a pass with no streak before it: only the webhook on passed"],
    [
      "passed",
      [0, 2],
      [
        { hook: 0, kind: "recovered" },
        { hook: 1, kind: "passed" },
        { hook: 2, kind: "recovered" },
      ],
      "the first pass after a streak: recovered to those that heard it, passed to the one on passed",
    ],
    ["regressed", [0], [{ hook: 0, kind: "regressed" }], "a streak goes on: no recovery until a pass"],
  ] satisfies [AlertKind, number[], HookAlert[], string][])("%s after a streak heard by %j → %j (%s)", (kind, heard, alerts, _why) => {
    expect(turnAlerts(kind, hooks, heard)).toEqual(alerts);
  });
});

describe("heardInStreak: who gets recovered", () => {
  it.each([
    // [alerts since the last pass, webhooks, why]
    [[], [], "nothing since the last pass: no recovery"],
    [[{ hook: 1, kind: "failed" }], [1], "one webhook heard a failure"],
    [
      [
        { hook: 2, kind: "refused" },
        { hook: 0, kind: "missed" },
        { hook: 2, kind: "failed" },
      ],
      [0, 2],
      "each webhook once, in order",
    ],
    [[{ hook: 0, kind: "recovered" }], [], "a recovery is not a streak: the next pass after a recovery says nothing more"],
    [[{ hook: 1, kind: "passed" }], [], "a pass heard is no streak"],
  ] satisfies [HookAlert[], number[], string][])("%j → %j (%s)", (alerts, hooks, _why) => {
    expect(heardInStreak(alerts)).toEqual(hooks);
  });
});

describe("the watchdog's deadline", () => {
  const run = { startedAtMs: 0, plannedDurationMs: 5 * MIN, phaseTimeoutsMs: 0 };
  it.each([
    // [run, now, overdue, why]
    [run, 5 * MIN, false, "at its planned end it may still be finishing"],
    [run, 15 * MIN, false, "the grace (10 min) is the deadline itself"],
    [run, 15 * MIN + 1, true, "past planned end + grace: ended"],
    [{ ...run, phaseTimeoutsMs: 2 * MIN }, 16 * MIN, false, "a k6 script's setup and teardown timeouts extend it"],
    [{ ...run, startedAtMs: 60 * MIN }, 70 * MIN, false, "counted from the turn that started it"],
  ])("%j at %i: %s (%s)", (plan, nowMs, overdue, _why) => {
    expect(isOverdue(plan, nowMs)).toBe(overdue);
  });

  it("names the deadline it enforced", () => {
    expect(runDeadlineMs(run)).toBe(15 * MIN);
    expect(watchdogReason(run)).toBe(`${WATCHDOG_REASON} (1970-01-01T00:15:00.000Z: its planned end + 10 min)`);
  });
});

describe("deliveryStep: the outbox's retries across ticks", () => {
  it.each([
    // [attempts made, created, now, status, step, why]
    [1, 0, 0, 200, { kind: "delivered" }, "a 2xx: delivered"],
    [1, 0, 0, 503, { kind: "retry", atMs: MIN }, "the first failure: again in a minute"],
    [1, 0, 0, null, { kind: "retry", atMs: MIN }, "no answer: the same"],
    [3, 0, 10 * MIN, 503, { kind: "retry", atMs: 14 * MIN }, "doubling: 1, 2, 4 min"],
    [9, 0, 100 * MIN, 429, { kind: "retry", atMs: 160 * MIN }, "capped at an hour (2^8 min would be longer)"],
    [2, 0, 0, 404, { kind: "abandoned", reason: "the receiver refused it (HTTP 404)" }, "a 4xx will not change by retrying"],
    [2, 0, 0, 408, { kind: "retry", atMs: 2 * MIN }, "a timeout answer is worth retrying"],
    [30, 0, GIVE_UP_AFTER_MS - 30 * MIN, 500, { kind: "abandoned", reason: "not delivered within 24 h (30 attempts)" }, "past 24 h: abandoned"],
    [30, 0, GIVE_UP_AFTER_MS - 61 * MIN, 500, { kind: "retry", atMs: GIVE_UP_AFTER_MS - MIN }, "the last retry inside 24 h still goes"],
  ] as const)("attempt %i (created %i, now %i) answered %s → %j (%s)", (attempts, createdAtMs, nowMs, status, step, _why) => {
    expect(deliveryStep({ attempts, createdAtMs, nowMs, status })).toEqual(step);
  });

  it("never waits less than a minute nor more than an hour, and gives up within 24 h of enqueueing", () => {
    for (let attempts = 1, nowMs = 0; ; attempts++) {
      const step = deliveryStep({ attempts, createdAtMs: 0, nowMs, status: null });
      if (step.kind !== "retry") {
        expect(step.kind).toBe("abandoned");
        expect(nowMs).toBeLessThanOrEqual(GIVE_UP_AFTER_MS);
        expect(attempts).toBe(29); // 1+2+…+32 min, then hourly: 23 h 3 min in, the next would be past 24 h
        break;
      }
      expect(step.atMs - nowMs).toBeGreaterThanOrEqual(MIN);
      expect(step.atMs - nowMs).toBeLessThanOrEqual(60 * MIN);
      nowMs = step.atMs;
    }
  });
});

describe("an alert's body and headers", () => {
  const refused: AlertEvent = {
    schedule: { id: "s-1", name: "nightly" },
    dueAt: "2026-11-28T03:00:00.000Z",
    turn: { outcome: "refused", missed: 0, detail: "target not allowed" },
    run: null,
    verdict: null,
  };
  const delivery = { id: "0b6f6e7c-delivery", sentAtMs: Date.parse("2026-11-28T03:00:05Z") };

  it("signs the delivery id and the time it was sent inside the JSON body, and names the id in a header", async () => {
    const body = webhookBody("json", "refused", refused, delivery);
    expect(JSON.parse(body)).toEqual({
      type: "edgeload.scheduled-run.verdict",
      deliveryId: "0b6f6e7c-delivery",
      sentAt: "2026-11-28T03:00:05.000Z",
      schedule: { id: "s-1", name: "nightly" },
      dueAt: "2026-11-28T03:00:00.000Z",
      verdict: "refused",
      turn: { outcome: "refused", missed: 0, detail: "target not allowed" },
      run: null,
      reasons: ["target not allowed"],
      baselineRunId: null,
      regressions: [],
    });
    const headers = await deliveryHeaders("a-secret-of-16-chars", body, delivery);
    expect(headers["x-edgeload-delivery"]).toBe("0b6f6e7c-delivery");
    expect(headers["x-edgeload-timestamp"]).toBe(String(delivery.sentAtMs / 1000));
    expect(headers["x-edgeload-signature"]).toBe(`v1=${await hmacSha256Hex("a-secret-of-16-chars", `${delivery.sentAtMs / 1000}.${body}`)}`);
  });

  it("keeps Slack's body text (the id rides in the header) and names a turn without a run by its time", () => {
    expect(JSON.parse(webhookBody("slack", "refused", refused, delivery))).toEqual({
      text: ":no_entry: edgeload schedule *nightly*: turn of 2026-11-28T03:00:00.000Z *refused*\n• target not allowed",
    });
  });

  it.each([
    // [kind, event change, reasons, why]
    [
      "skipped",
      { turn: { outcome: "skipped", missed: 0, detail: "the previous run r-1 of this schedule is still going" } },
      ["the previous run r-1 of this schedule is still going"],
      "which run",
    ],
    [
      "missed",
      { turn: { outcome: "missed", missed: 3, detail: "the turn of X is too late to start" } },
      ["3 turn(s) went by without a run: the turn of X is too late to start"],
      "how many",
    ],
    [
      "missed",
      { turn: { outcome: "started", missed: 2, detail: null } },
      ["2 turn(s) before this one went by without a run"],
      "a started turn after an outage",
    ],
    [
      "recovered",
      {
        verdict: { kind: "passed", reasons: ["nothing regressed"], regressions: [], baselineRunId: "r-b" },
        streak: { turns: 3, since: "2026-11-27T03:00:00.000Z" },
      },
      ["passed after 3 turn(s) that did not, since 2026-11-27T03:00:00.000Z", "nothing regressed"],
      "how long it was bad",
    ],
  ] as const)("%s says why: %j (%s)", (kind, change, reasons, _why) => {
    expect(alertReasons(kind, { ...refused, ...change } as AlertEvent)).toEqual(reasons);
  });
});

describe("`on` in a schedule", () => {
  const parse = (on: unknown) =>
    parseScheduleInput(
      { name: "n", cron: "0 3 * * *", spec: {}, webhooks: [{ url: "https://hooks.slack.com/x", on }] },
      "https://hooks.slack.com",
      "deployed",
      () => "s".repeat(20),
    );

  it("takes the turn kinds", () => {
    const parsed = parse(["refused", "skipped", "missed"]);
    expect(parsed.ok && parsed.schedule.webhooks[0]!.on).toEqual(["refused", "skipped", "missed"]);
  });

  it("refuses recovered, saying where it goes instead", () => {
    const parsed = parse(["failed", "recovered"]);
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      {
        field: "webhooks[0].on",
        detail:
          'a non-empty list of passed, regressed, failed, inconclusive, refused, skipped, missed ("recovered" is not chosen here: it goes to every webhook that was alerted while the schedule did not pass)',
      },
    ]);
  });
});
