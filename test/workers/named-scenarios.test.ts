/**
 * A run of several named scenarios through the real RunCoordinator and LoadShards in
 * workerd, against the real target: SSE streams held by VUs, a rate-paced scenario that
 * starts later, and a scraper of the target's /metrics, with setup and teardown run once
 * by the coordinator and each scenario's thresholds evaluated on its own.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, waitForStatus } from "./helpers.ts";

const run = () => ({
  name: "named scenarios",
  target: env.TARGET_URL,
  regions: ["weur"],
  timeout: "2s",
  // Setup runs once, before any shard: its capture is the same for every scenario.
  setup: [{ name: "config", path: "/app/config", capture: { version: { json: "$.version" } } }],
  teardown: [{ name: "bye", path: "/healthz" }],
  scenarios: {
    streams: {
      executor: "constant-vus",
      vus: 3,
      duration: "3s",
      shards: 1,
      steps: [{ name: "open", path: "/app/config/stream?interval=100&heartbeat=1000", sse: {} }],
      thresholds: { sse_time_to_first_message: ["p(95)<1500"], sse_messages: ["count>10"] },
    },
    load: {
      executor: "constant-arrival-rate",
      rate: 20,
      duration: "2s",
      startTime: "1s",
      shards: 1,
      steps: [{ name: "delay", path: "/delay?ms=5&v={{setup.version}}", checks: [{ status: 200 }] }],
      // Impossible on purpose: this scenario fails, the others do not. A count, not a time: a
      // timing threshold failed while a busy machine saturated the generator is inconclusive.
      thresholds: { http_reqs: ["count<1"] },
    },
    scrape: {
      executor: "constant-arrival-rate",
      rate: 2,
      duration: "3s",
      shards: 1,
      steps: [{ name: "metrics", path: "/metrics", scrape: { series: ["target_sse_streams_open", "target_event_loop_lag_seconds"] } }],
    },
  },
});

describe("a run of named scenarios", () => {
  it("runs each scenario on its own shards from its start, storing streams' metrics, scraped series and per-scenario verdicts", async () => {
    const created = await api("/v1/runs", { method: "POST", body: JSON.stringify(run()) });
    expect(created.status).toBe(201);
    const { id, plan } = (await created.json()) as { id: string; plan: { shards: Array<{ scenario: string }> } };
    expect(plan.shards.map((s) => s.scenario)).toEqual(["streams", "load", "scrape"]);

    const view = await waitForStatus(id, undefined, 40_000);
    expect(view.status).toBe("failed"); // the load scenario's threshold

    const summary = (await (await api(`/v1/runs/${id}/summary`)).json()) as Record<string, any>;
    const scenarios = summary.edgeload.scenarios;
    expect(scenarios.streams.thresholdsPassed).toBe(true);
    expect(scenarios.load.thresholdsPassed).toBe(false);
    expect(scenarios.load.startS).toBe(1);
    expect(scenarios.streams.totals.requests).toBeGreaterThanOrEqual(3); // one stream per VU, held to the end
    expect(summary.metrics.sse_time_to_first_message["p(95)"]).toBeLessThan(1500);
    expect(summary.metrics.sse_messages.count).toBeGreaterThan(10);
    expect(summary.edgeload.setup).toMatchObject({ ok: true, steps: [{ name: "config", status: 200, ok: true }] });
    expect(summary.edgeload.teardown).toMatchObject({ ok: true, steps: [{ name: "bye", ok: true }] });

    // Windows carry the scenarios' qualified step names; the later one starts at its offset.
    const steps = await env.DB.prepare(
      "SELECT step, MIN(window_s) AS first, SUM(requests) AS requests FROM windows WHERE run_id = ? GROUP BY step ORDER BY step",
    )
      .bind(id)
      .all<{ step: string; first: number; requests: number }>();
    const byStep = Object.fromEntries(steps.results.map((r) => [r.step, r]));
    expect(Object.keys(byStep)).toEqual(["load.delay", "scrape.metrics", "streams.open"]);
    expect(byStep["load.delay"]!.first).toBeGreaterThanOrEqual(1);
    expect(byStep["load.delay"]!.requests).toBe(40);

    // Scraped series are stored with the run; the streams were open while scraping.
    const series = (await (await api(`/v1/runs/${id}/series?name=target_sse_streams_open`)).json()) as {
      series: Array<{ points: Array<[number, number, number]> }>;
    };
    expect(series.series).toHaveLength(1);
    expect(series.series[0]!.points.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...series.series[0]!.points.map((p) => p[2]))).toBeGreaterThanOrEqual(1);

    // What setup captured never reaches D1 (it is often a credential).
    const stored = await env.DB.prepare("SELECT spec_json FROM runs WHERE id = ?").bind(id).first<{ spec_json: string }>();
    expect(JSON.parse(stored!.spec_json).setupData).toEqual({});
  });

  it("ends the run as an error, starting no shard, when setup fails", async () => {
    const spec = { ...run(), setup: [{ name: "broken", path: "/delay?status=503", capture: { version: { json: "$.version" } } }] };
    const created = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec) });
    expect(created.status).toBe(201);
    const { id, status } = (await created.json()) as { id: string; status: string };
    expect(status).toBe("error");
    const view = await waitForStatus(id);
    expect(view.abortReason).toMatch(/^setup step broken failed: status 503/);
    const windows = await env.DB.prepare("SELECT COUNT(*) AS n FROM windows WHERE run_id = ?").bind(id).first<{ n: number }>();
    expect(windows!.n).toBe(0);
  });
});
