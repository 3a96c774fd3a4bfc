/**
 * The CRUD hot-key and configuration-streaming examples (examples/), shortened to seconds
 * and a few VUs, end to end against the real local target. What a user would check: setup
 * created the key space once; reads and writes in the 80/20 mix; the keys written follow
 * the Zipf distribution (chi-squared over rank bins); two builds of the target compared by
 * one spec; SSE streams opened, got their first message and the admin's changes, and were
 * closed at the scenario's end; the target's series scraped into the run; each scenario's
 * thresholds evaluated on its own. Load goes only to the loopback target.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { zipfProbability } from "../../core/data/zipf.ts";
import type { EdgeloadClient } from "../../cli/client.ts";
import type { LocalStack } from "../../cli/local-stack.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-examples-");
let stack: LocalStack;
let client: EdgeloadClient;

beforeAll(() => {
  ({ stack, client } = fixture);
});

const example = async (name: string) => JSON.parse(await readFile(new URL(`../../examples/${name}.json`, import.meta.url), "utf8"));
const cli = (args: string[]) => runCli(args, { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });

/** Rank bins for the chi-squared check: every bin expects ≥ 5 writes at a few hundred writes. */
const BINS: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [2, 2],
  [3, 3],
  [4, 5],
  [6, 10],
  [11, 30],
  [31, 100],
  [101, 300],
  [301, 1000],
  [1001, 3000],
  [3001, 10000],
];
/** 99.9% quantile of chi-squared with BINS.length − 1 = 10 degrees of freedom. */
const CHI2_999_10 = 29.59;

describe("examples against the local target", () => {
  it("runs the CRUD hot-key mix: setup once, 80/20 reads/writes, Zipf-distributed keys, two builds compared", async () => {
    const crud = await example("crud-hot-keys");
    // The example's ramp 100 → 500 → 1,000 VUs as 2 → 5 → 10 in seconds; no teardown here,
    // so the keys' write counts can be read after the run.
    const shortened = {
      ...crud,
      target: stack.targetUrl,
      teardown: undefined,
      shards: 2,
      regions: ["wnam", "weur"],
      stages: [
        { target: 2, duration: "1s" },
        { target: 5, duration: "1s" },
        { target: 5, duration: "1s" },
        { target: 10, duration: "1s" },
        { target: 10, duration: "2s" },
        { target: 0, duration: "1s" },
      ],
    };
    const run = await client.createRun(shortened);
    const view = await client.waitForEnd(run.id, () => {}, 250);
    const summary = await client.summary(run.id);
    const e = summary.edgeload;
    expect(view.status).toBe("passed");
    expect(e.setup).toMatchObject({ ok: true, steps: [{ name: "create_records", status: 200, ok: true }] });
    expect(e.vus!.peak).toBe(10);
    expect(e.shards.map((s) => s.telemetry?.peakInFlight)).toEqual([5, 5]);

    const reads = e.steps.read!.requests;
    const writes = e.steps.write!.requests;
    expect(reads + writes).toBeGreaterThan(500);
    expect(reads / (reads + writes)).toBeCloseTo(0.8, 1);
    expect(e.steps.read!.failed).toBe(0); // every key read was created by setup

    // What the target stored: version = 1 + writes, per key.
    const listed = (await (await fetch(`${stack.targetUrl}/app/v1/records?prefix=key-`)).json()) as { records: Array<[string, number]> };
    expect(listed.records).toHaveLength(10_000);
    const writesByRank = new Map(listed.records.map(([key, version]) => [Number(key.slice(4)), version - 1]));
    const total = [...writesByRank.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(writes);
    let chi2 = 0;
    for (const [from, to] of BINS) {
      let observed = 0;
      let p = 0;
      for (let k = from; k <= to; k++) {
        observed += writesByRank.get(k) ?? 0;
        p += zipfProbability(10_000, 1, k);
      }
      chi2 += (observed - total * p) ** 2 / (total * p);
    }
    expect(chi2).toBeLessThan(CHI2_999_10);
    // Hot keys: the hottest 20% of keys took most of the writes (80% in expectation).
    let hot = 0;
    for (let k = 1; k <= 2_000; k++) hot += writesByRank.get(k) ?? 0;
    expect(hot / total).toBeGreaterThan(0.7);

    // The same spec against the second build, chosen on the command line, then compared.
    const file = join(fixture.stateDir, "crud.json");
    await writeFile(file, JSON.stringify({ ...shortened, teardown: crud.teardown }));
    const second = await cli(["run", file, "--var", "build=v2"]);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/setup\.+: ✓ create_records 200/);
    expect(second.stdout).toMatch(/teardown\.+: ✓ delete_records 200/);
    const runs = await client.listRuns();
    const v2 = runs.runs.find((r) => r.id !== run.id && r.name === crud.name) as { id: string };
    expect((await client.summary(v2.id)).edgeload.setup?.steps[0]?.ok).toBe(true);
    const compared = await cli(["compare", run.id, v2.id]);
    expect([0, 99]).toContain(compared.code); // improved, unchanged or regressed: a verdict either way
    expect(compared.stdout).toContain(`candidate  ${v2.id}`);
    expect(compared.stdout).toMatch(/all\s+p95\s/);
    // v2's teardown removed its keys (both builds share the table).
    expect(((await (await fetch(`${stack.targetUrl}/app/v1/records?prefix=key-`)).json()) as { records: unknown[] }).records).toHaveLength(0);
  });

  it("runs configuration streaming: held SSE streams, an admin writer and a scraper in parallel, each with its own thresholds", async () => {
    const spec = await example("config-streaming");
    const s = spec.scenarios;
    const shortened = {
      ...spec,
      target: stack.targetUrl,
      regions: ["wnam"],
      secrets: { admin: stack.targetAdminSecret },
      scenarios: {
        // 0 → 20 streams in 1 s, held 4 s; the admin writes 5 changes/s from 1 s for 3 s;
        // the scraper reads /metrics every 500 ms.
        // Heartbeats every 500 ms: the target notices a closed stream when a write to it fails.
        streams: {
          ...s.streams,
          stages: [
            { target: 20, duration: "1s" },
            { target: 20, duration: "4s" },
          ],
          shards: 2,
          regions: ["wnam", "weur"],
          steps: [{ ...s.streams.steps[0], path: "/app/config/stream?heartbeat=500" }],
        },
        admin: { ...s.admin, rate: 5, timeUnit: "1s", duration: "3s", startTime: "1s" },
        scrape: { ...s.scrape, rate: 2, timeUnit: "1s", duration: "5s" },
      },
    };
    const file = join(fixture.stateDir, "config-streaming.json");
    await writeFile(file, JSON.stringify(shortened));
    const result = await cli(["run", file]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/SCENARIOS/);
    expect(result.stdout).toMatch(/streams\s+│?\s*ramping-vus/);

    const runs = await client.listRuns();
    const id = (runs.runs.find((r) => r.name === spec.name) as { id: string }).id;
    const summary = await client.summary(id);
    const e = summary.edgeload;
    const m = summary.metrics as Record<string, any>;
    expect(e.status).toBe("passed");
    // Each scenario's thresholds, evaluated over its own steps.
    expect(Object.fromEntries(Object.entries(e.scenarios).map(([name, sc]) => [name, [sc.thresholdsPassed, sc.thresholds.length]]))).toEqual({
      streams: [true, 4],
      admin: [true, 2],
      scrape: [true, 1],
    });
    expect(e.scenarios.admin!.startS).toBe(1);
    expect(e.scenarios.admin!.totals.requests).toBe(15);

    // Streams: 20 opened (one per VU), each timed to its first message (the current config).
    expect(e.scenarios.streams!.totals.requests).toBe(20);
    expect(m.sse_time_to_open).toMatchObject({ type: "trend" });
    expect(m.sse_time_to_first_message["p(95)"]).toBeLessThan(1000);
    // Each open stream received the initial config and every admin change while it was open.
    expect(m.sse_messages.count).toBeGreaterThanOrEqual(20 + 15 * 15);
    expect(m.sse_streams_ended_early.count).toBe(0);

    // The target's series, scraped during the run, stored with it.
    const series = (await (await fetch(`${stack.apiUrl}/v1/runs/${id}/series`, { headers: { authorization: `Bearer ${stack.token}` } })).json()) as {
      series: Array<{ name: string; points: Array<[number, number, number]> }>;
    };
    const byName = Object.fromEntries(series.series.map((x) => [x.name, x.points]));
    expect(Object.keys(byName).sort()).toEqual([
      "target_config_version",
      "target_config_writes_total",
      "target_event_loop_lag_seconds",
      "target_sse_streams_open",
    ]);
    expect(byName.target_sse_streams_open!.length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...byName.target_sse_streams_open!.map((p) => p[2]))).toBe(20);
    const writesSeen = byName.target_config_writes_total!.map((p) => p[2]);
    expect(writesSeen[writesSeen.length - 1]! - writesSeen[0]!).toBeGreaterThanOrEqual(10);
    const local = await cli(["query", id, "--series", "target_sse_streams_open", "--format", "json"]);
    expect(local.code).toBe(0);
    expect(JSON.parse(local.stdout).length).toBe(byName.target_sse_streams_open!.length);

    // The streams were closed at the scenario's end: within a heartbeat or two the target
    // counts none open.
    let open = -1;
    for (let i = 0; i < 30 && open !== 0; i++) {
      const text = await (await fetch(`${stack.targetUrl}/metrics`)).text();
      open = Number(/^target_sse_streams_open (\S+)$/m.exec(text)?.[1]);
      if (open !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(open).toBe(0);
  });

  it("gives each VU its own seed records, never the same record on two shards, when the spec asks for unique", async () => {
    // 60 users in a seed set; 6 VUs on 3 shards each write the record of the user they took.
    // A count of iterations, not a duration: a shard started late on a busy host would run
    // out of time before its records and leave some untaken. 66 shared iterations are 22 a
    // shard, 20 with a record and 2 that find none left.
    const users = Array.from({ length: 60 }, (_, i) => ({ email: `seed-${i}@example.test`, userId: `u${String(i).padStart(3, "0")}` }));
    await client.uploadSeed("users-60", { users });
    const run = await client.createRun({
      name: "unique seed records",
      target: stack.targetUrl,
      executor: "shared-iterations",
      vus: 6,
      iterations: 66,
      maxDuration: "60s",
      shards: 3,
      regions: ["wnam", "weur", "apac"],
      data: { seed: "users-60", select: "unique" },
      steps: [
        {
          name: "claim",
          method: "PUT",
          path: "/app/v1/records/claim-{{data.userId}}",
          body: { value: "{{data.email}}" },
          checks: [{ status: 200 }],
          think: "50ms",
        },
      ],
    });
    await client.waitForEnd(run.id, () => {}, 250);
    const summary = await client.summary(run.id);
    const claims = (await (await fetch(`${stack.targetUrl}/app/v1/records?prefix=claim-`)).json()) as { records: Array<[string, number]> };
    // Every user claimed exactly once (version 1), across the three shards; then the
    // iterations that found no record left were dropped, not sent.
    expect(claims.records.map(([key]) => key)).toEqual(users.map((u) => `claim-${u.userId}`));
    expect(claims.records.every(([, version]) => version === 1)).toBe(true);
    expect((summary.metrics as Record<string, any>).http_reqs.count).toBe(60);
    expect((summary.metrics as Record<string, any>).dropped_iterations.count).toBe(6);

    // A field the seed's kind does not have is refused before anything runs.
    await expect(
      client.createRun({
        name: "bad field",
        target: stack.targetUrl,
        executor: "constant-vus",
        vus: 1,
        duration: "1s",
        data: { seed: "users-60" },
        steps: [{ path: "/u/{{data.token}}" }],
      }),
    ).rejects.toThrow(/data\.token.*users.*email, userId/);
  });
});
