import { describe, expect, it } from "vitest";
import { compareRuns, type Comparison } from "../results/compare.ts";
import { inconclusive, PASSED } from "../run/verdict.ts";
import { parseScheduleInput, redactWebhook } from "./schedule-input.ts";
import { scheduledVerdict } from "./scheduled-verdict.ts";
import { signatureHeaders, webhookBody } from "./webhook.ts";
import { rollingBaseline } from "./baseline-rule.ts";
import { hmacSha256Hex as hmacHex } from "../data/web-crypto.ts";

const EMPTY = { windows: [], histograms: [], shards: [], durationS: 1 };
const comparison = (over: Partial<Comparison>): Comparison => ({ ...compareRuns(EMPTY, EMPTY), ...over });
const p95 = {
  region: "all",
  metric: "p95",
  unit: "ms",
  baseline: 10,
  candidate: 60,
  change: 50,
  relativeChange: 5,
  interval: [48, 52],
  minEffect: 1,
  method: "bootstrap",
  pValue: null,
} as const;

describe("scheduledVerdict", () => {
  it.each([
    // [run status, baseline, comparison, kind, why]
    ["failed", "r-b", null, "failed", "thresholds failed: failed, whatever the baseline"],
    ["aborted", "r-b", null, "failed", "an aborted run did not do its job"],
    ["inconclusive", "r-b", null, "inconclusive", "the run itself could not be established"],
    ["passed", null, null, "passed", "first run: no baseline yet, its thresholds decide"],
    ["passed", "r-b", null, "inconclusive", "a baseline without stored rows: never 'unchanged'"],
    ["passed", "r-b", comparison({ metrics: [{ ...p95, verdict: "regressed" }], outcome: PASSED }), "regressed", "a metric beyond noise"],
    [
      "passed",
      "r-b",
      comparison({ metrics: [{ ...p95, verdict: "no-data" }], outcome: inconclusive("all p95: no data") }),
      "inconclusive",
      "nothing comparable",
    ],
    ["passed", "r-b", comparison({ metrics: [{ ...p95, verdict: "unchanged" }], outcome: PASSED }), "passed", "within noise"],
  ] as const)("%s vs %s → %s (%s)", (runStatus, baselineRunId, cmp, kind, _why) => {
    expect(scheduledVerdict({ runStatus, runReasons: [], baselineRunId, comparison: cmp }).kind).toBe(kind);
  });

  it("names each regressed metric with both values and the change", () => {
    const v = scheduledVerdict({
      runStatus: "passed",
      runReasons: [],
      baselineRunId: "r-b",
      comparison: comparison({ metrics: [{ ...p95, verdict: "regressed" }] }),
    });
    expect(v.reasons).toEqual(["all p95 10.0 ms → 60.0 ms (+500%)"]);
    expect(v.regressions[0]).toMatchObject({ metric: "p95", baseline: 10, candidate: 60 });
  });
});

describe("parseScheduleInput", () => {
  const ok = { name: "nightly", cron: "0 3 * * *", spec: { target: "http://127.0.0.1:1" } };
  const parse = (body: unknown, mode: "local" | "deployed" = "deployed", allow = "https://hooks.slack.com") =>
    parseScheduleInput(body, allow, mode, () => "generated-secret-0123456789");

  it("takes a schedule with defaults: rolling baseline, json, alerts on all but passed, a generated secret", () => {
    const parsed = parse({ ...ok, webhooks: [{ url: "https://hooks.slack.com/services/T/B/x" }] });
    expect(parsed.ok && parsed.schedule.baseline).toEqual({ kind: "rolling" });
    expect(parsed.ok && parsed.schedule.webhooks).toEqual([
      { url: "https://hooks.slack.com/services/T/B/x", format: "json", secret: "generated-secret-0123456789", on: ["regressed", "failed", "inconclusive"] },
    ]);
    expect(parsed.ok && parsed.schedule.generatedSecrets).toEqual([0]);
  });

  it.each([
    // [body change, mode, field refused, why]
    [{ webhooks: [{ url: "https://evil.example.net/x" }] }, "deployed", "webhooks[0].url", "a host outside ALLOWED_WEBHOOKS (no SSRF through alerts)"],
    [{ webhooks: [{ url: "http://127.0.0.1:9/x" }] }, "deployed", "webhooks[0].url", "loopback only under wrangler dev"],
    [{ webhooks: [{ url: "https://hooks.slack.com/x", secret: "short" }] }, "deployed", "webhooks[0].secret", "a guessable secret"],
    [{ webhooks: [{ url: "https://hooks.slack.com/x", on: ["unchanged"] }] }, "deployed", "webhooks[0].on", "not a verdict"],
    [{ cron: "0 3 * *" }, "deployed", "cron", "four fields"],
    [{ baseline: { runId: "nope" } }, "deployed", "baseline", "not a run id"],
  ] as const)("%j (%s) refuses %s (%s)", (change, mode, field, _why) => {
    const parsed = parse({ ...ok, ...change }, mode);
    expect(parsed.ok ? [] : parsed.problems.map((p) => p.field)).toEqual([field]);
  });

  it("takes a loopback webhook under wrangler dev", () => {
    expect(parse({ ...ok, webhooks: [{ url: "http://127.0.0.1:9/x" }] }, "local", "").ok).toBe(true);
  });

  it("shows a webhook without its secret or path", () => {
    expect(redactWebhook({ url: "https://hooks.slack.com/services/T/B/secret", format: "slack", secret: "s".repeat(20), on: ["failed"] })).toEqual({
      url: "https://hooks.slack.com/…",
      format: "slack",
      secret: "(redacted)",
      on: ["failed"],
    });
  });
});

describe("webhooks", () => {
  it("signs timestamp.body with HMAC-SHA256 (RFC 4231 test case 2)", async () => {
    expect(await hmacHex("Jefe", "what do ya want for nothing?")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    const headers = await signatureHeaders("Jefe", "what do ya want for nothing?", 0);
    expect(headers["x-edgeload-timestamp"]).toBe("0");
    expect(headers["x-edgeload-signature"]).toBe(`v1=${await hmacHex("Jefe", "0.what do ya want for nothing?")}`);
  });

  it("has a Slack-compatible text body naming the regressed metrics", () => {
    const verdict = scheduledVerdict({
      runStatus: "passed",
      runReasons: [],
      baselineRunId: "r-b",
      comparison: comparison({ metrics: [{ ...p95, verdict: "regressed" }] }),
    });
    const event = {
      schedule: { id: "s-1", name: "nightly" },
      run: { id: "r-c", status: "passed", url: "https://x/v1/runs/r-c" },
      dueAt: "2026-11-28T03:00:00.000Z",
      turn: { outcome: "started", missed: 0, detail: null },
      verdict,
    } as const;
    const delivery = { id: "d-1", sentAtMs: 0 };
    expect(JSON.parse(webhookBody("slack", "regressed", event, delivery)).text).toBe(
      ":chart_with_upwards_trend: edgeload schedule *nightly*: run <https://x/v1/runs/r-c|r-c> *regressed* (baseline r-b)\n• all p95 10.0 ms → 60.0 ms (+500%)",
    );
    expect(JSON.parse(webhookBody("json", "regressed", event, delivery))).toMatchObject({
      verdict: "regressed",
      regressions: [{ metric: "p95", candidate: 60 }],
    });
  });
});

describe("rollingBaseline", () => {
  it.each([
    [[] as string[], null, "no run has passed yet: no baseline (the first run becomes it)"],
    [["r-9"], "r-9", "one passed run is the baseline"],
    [["r-9", "r-8", "r-7"], "r-7", "fewer than the window: the oldest of them"],
    [["r-9", "r-8", "r-7", "r-6", "r-5", "r-4", "r-3", "r-2", "r-1"], "r-3", "a full window reaches seven passed runs back, no further"],
  ] satisfies [string[], string | null, string][])("%j → %s (%s)", (passed, baseline, _why) => {
    expect(rollingBaseline(passed)).toBe(baseline);
  });

  it("catches a drift below the noise threshold each night once it adds up within the window", () => {
    // p95 grows 2 % a night; compare's rule needs more than 5 %. Against the latest passed
    // run each night reads +2 % and passes; against the rolling baseline the fourth night
    // is 8 % above it and regresses.
    const p95 = (night: number) => 100 * 1.02 ** night;
    const passed: string[] = [];
    let regressedOn: number | null = null;
    for (let night = 0; night < 10 && regressedOn === null; night++) {
      const baseline = rollingBaseline(passed);
      const worse = baseline !== null && p95(night) / p95(Number(baseline.slice(2))) - 1 > 0.05;
      if (worse) regressedOn = night;
      else passed.unshift(`r-${night}`);
    }
    expect(regressedOn).toBe(3);
  });
});
