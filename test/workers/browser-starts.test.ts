/**
 * A run's browser shards take their turns, and the API prices their browsers (issue 52).
 *
 * Turns: a run of a protocol scenario and a browser scenario of four shards is planned and
 * assigned as the coordinator assigns it (core/schedule/shard-assignment.ts); each browser
 * shard, a LoadShard object of its own, builds its browser as its flow does
 * (workers/shard/shard-flow.ts shardBrowserPort) and asks for a context at once, before its
 * scenario has even started, as its VUs' first iterations would. Browser Run is asked for a
 * new browser (POST /v1/devtools/browser, recorded through a wrapped binding) by each shard
 * no earlier than its planned start, and the four asks are spread as the plan spread them:
 * planned a second apart, measured at least half a second apart (the margin is for timers on
 * a loaded machine). Session reuse across alarms and a lost session replaced are
 * browser-session.test.ts's.
 *
 * Prices: `POST /v1/plan` of the same kind of run lists the Browser Run lines and limits,
 * and `POST /v1/runs` with a maxCost that only the browsers pass is refused, naming them.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/data/web-crypto.ts";
import { BROWSER_RUN_LIMITS } from "../../core/plan/platform-limits.ts";
import { DEFAULT_LIMITS, planRun } from "../../core/plan/plan.ts";
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { shardAssignments } from "../../core/schedule/shard-assignment.ts";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { shardBrowserPort } from "../../workers/shard/shard-flow.ts";
import { api } from "./helpers.ts";

const BUNDLE = "b".repeat(64);

/** A run of a protocol scenario `api` and, from `uiStart`, a browser scenario `ui` of `shards` shards of one VU each. */
function hybridRun(shards: number, extra: Record<string, unknown> = {}, browser = true) {
  const script = { bundle: extra.bundle ?? BUNDLE, ...(browser ? { browser: true } : {}) };
  const { bundle: _bundle, ...rest } = extra;
  return {
    name: "browser starts",
    target: env.TARGET_URL,
    scenarios: {
      api: { executor: "constant-vus", vus: 1, duration: "5s", shards: 1, regions: ["wnam"], steps: [{ path: "/" }], script: { bundle: script.bundle } },
      ui: { executor: "constant-vus", vus: shards, duration: "30s", startTime: "1s", shards, regions: ["wnam"], steps: [{ path: "/" }], script },
    },
    ...rest,
  };
}

/** The Browser Run binding, with the time of each request for a new browser written down. */
function recordingBinding(asks: number[]): Fetcher {
  const browser = env.BROWSER;
  if (!browser) throw new Error("wrangler.toml has no [browser] binding");
  return {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      if (request.method === "POST" && new URL(request.url).pathname === "/v1/devtools/browser") asks.push(Date.now());
      return browser.fetch(input, init);
    },
  } as unknown as Fetcher;
}

describe("a run's browser shards", () => {
  it("ask Browser Run for their browsers no earlier than the plan's spread starts, which keep each second within the account's rate", async () => {
    const parsed = parseRunSpec(hybridRun(4));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const planned = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, DEFAULT_LIMITS);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    const t0Ms = Date.now() + 300;
    const assignments = shardAssignments({
      runId: `browser-starts-${crypto.randomUUID()}`,
      spec: parsed.spec,
      plan: planned.plan,
      t0Ms,
      mode: "local",
      flushGraceMs: 5_000,
    });

    // The protocol shard gets no turn; the four browser shards start a second apart from the scenario's start (1 s).
    expect(assignments.find((a) => a.part?.scenario === "api")!.browserStartMs).toBeUndefined();
    const ui = assignments.filter((a) => a.part?.scenario === "ui");
    expect(ui.map((a) => a.browserStartMs)).toEqual([0, 1000, 2000, 3000]);
    const plannedAtMs = ui.map((a) => a.t0Ms + a.browserStartMs!);
    for (const t of plannedAtMs) expect(plannedAtMs.filter((s) => s >= t && s < t + 1000).length).toBeLessThanOrEqual(BROWSER_RUN_LIMITS.newBrowsersPerS);

    const asked = await Promise.all(
      ui.map((assignment) => {
        const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${assignment.runId}/${assignment.part!.runShard}`));
        return runInDurableObject(stub, async (_instance, state) => {
          const asks: number[] = [];
          const port = shardBrowserPort(recordingBinding(asks), env.SEEDS, assignment, state.storage.kv);
          try {
            const context = await port.newContext();
            await context.close();
          } finally {
            await port.endInvocation(true);
          }
          return asks;
        });
      }),
    );
    // One new browser each, no earlier than its turn (a timer may fire a few ms early), not long after.
    expect(asked.map((asks) => asks.length)).toEqual([1, 1, 1, 1]);
    asked.forEach(([at], i) => {
      expect(at! - plannedAtMs[i]!).toBeGreaterThanOrEqual(-20);
      expect(at! - plannedAtMs[i]!).toBeLessThan(3_000);
    });
    const sorted = asked.map(([at]) => at!).sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(500);
  }, 60_000);

  it("acquire no browser when the invocation ends while they wait for their turn", async () => {
    const parsed = parseRunSpec(hybridRun(2));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const planned = planRun(parsed.spec, 0, DEFAULT_LIMITS);
    if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
    // Its turn is a minute away: the run is stopped long before it.
    const assignments = shardAssignments({
      runId: `browser-wait-${crypto.randomUUID()}`,
      spec: parsed.spec,
      plan: planned.plan,
      t0Ms: Date.now() + 60_000,
      mode: "local",
      flushGraceMs: 0,
    });
    const last = assignments.filter((a) => a.part?.scenario === "ui").at(-1)!;
    const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${last.runId}/${last.part!.runShard}`));
    const { asks, error } = await runInDurableObject(stub, async (_instance, state) => {
      const asks: number[] = [];
      const port = shardBrowserPort(recordingBinding(asks), env.SEEDS, last, state.storage.kv);
      const waiting = port.newContext().then(
        () => "acquired",
        (e: Error) => e.message,
      );
      await new Promise((r) => setTimeout(r, 100));
      await port.endInvocation(true);
      return { asks, error: await waiting };
    });
    expect(error).toBe("the shard's invocation ended while its browser waited for its turn (the account's new-browser rate)");
    expect(asks).toEqual([]);
  });
});

describe("the API prices a run's browsers", () => {
  it("POST /v1/plan lists the Browser Run cost lines and limits of a browser scenario, and none without one", async () => {
    const planOf = async (browser: boolean) => {
      const response = await api("/v1/plan", { method: "POST", body: JSON.stringify(hybridRun(4, {}, browser)) });
      expect(response.status).toBe(200);
      return (await response.json()) as {
        estimate: { usd: number; lines: Array<{ item: string; quantity: number; usd: number }> };
        limits: Array<{ level: string; limit: string; value: number }>;
      };
    };
    const withBrowsers = await planOf(true);
    const lines = withBrowsers.estimate.lines.filter((l) => l.item.startsWith("Browser Run"));
    // Four sessions from 1, 2, 3 and 4 s to the scenario's end at 31 s: (30 + 29 + 28 + 27) s; four at once.
    expect(lines.map((l) => [l.item, l.quantity])).toEqual([
      ["Browser Run browser hours", 114 / 3600],
      ["Browser Run concurrent browsers", 4],
    ]);
    expect(withBrowsers.limits.filter((l) => l.level === "Browser Run").map((l) => [l.limit, l.value])).toEqual([
      ["concurrent browsers (account)", 4],
      ["new browsers in any second (account)", 1],
      ["VUs per browser (contexts)", 1],
    ]);
    const without = await planOf(false);
    expect(without.estimate.lines.some((l) => l.item.startsWith("Browser Run"))).toBe(false);
    expect(withBrowsers.estimate.usd - without.estimate.usd).toBeCloseTo(
      lines.reduce((a, l) => a + l.usd, 0),
      6,
    );
  });

  it("POST /v1/runs refuses a browser run whose maxCost only its browsers exceed, naming the Browser Run cost", async () => {
    const bundle = JSON.stringify({ "main.js": "export default {}", "script.js": "export const files = {};" });
    const id = await sha256Hex(bundle);
    expect((await api(`/v1/scripts/${id}`, { method: "PUT", body: bundle })).status).toBe(201);
    // Without its browsers the run costs well under a cent; its four browsers at once are 4 × $2 / 30 days.
    const budget = 0.05;
    const protocolOnly = await api("/v1/plan", { method: "POST", body: JSON.stringify(hybridRun(4, { bundle: id, maxCost: budget }, false)) });
    expect(((await protocolOnly.json()) as { overBudget: unknown }).overBudget).toBeNull();

    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>();
    const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(hybridRun(4, { bundle: id, maxCost: budget })) });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { problems: Array<{ field: string; detail: string }> };
    expect(body.problems).toEqual([
      {
        field: "maxCost",
        detail: expect.stringMatching(
          /^the run's estimated cost is \$\S+, of which Browser Run \$0\.27\d* \(4 browsers, 0\.03 browser-hours, 4 at once\) \(prices of \d{4}-\d\d-\d\d\), above its budget of \$0\.05/,
        ),
      },
    ]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM runs").first<{ n: number }>()).toEqual(before);
  });
});
