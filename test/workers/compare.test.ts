/**
 * Run comparison through the API, on real runs against the local target: D1 rows in,
 * verdicts out, and named baselines stored in D1 (migration 0004).
 */
import { describe, expect, it } from "vitest";
import { api, createRun, waitForStatus } from "./helpers.ts";

const json = async (path: string, init?: Parameters<typeof api>[1]) => {
  const response = await api(path, init);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const row = (body: Record<string, any>, metric: string, region = "all") => body.metrics.find((m: any) => m.metric === metric && m.region === region);
const saveBaseline = (name: string, runId: string) => json(`/v1/baselines/${name}`, { method: "PUT", body: JSON.stringify({ runId }) });

describe("GET /v1/runs/:a/compare/:b", () => {
  it("calls two runs of the same target unchanged and a 25 ms slower one regressed, by id or by baseline name", async () => {
    // Side by side, so the two alike runs share the machine's conditions.
    const runs = await Promise.all([createRun(), createRun(), createRun({ steps: [{ path: "/delay?ms=30", checks: [{ status: 200 }] }] })]);
    await Promise.all(runs.map((r) => waitForStatus(r.id)));
    const [base, same, slow] = runs.map((r) => r.id) as [string, string, string];

    // Loopback latencies are a few ms; on a busy shared machine two alike runs can differ by
    // more than the default 1 ms minimum at the tail, so the alike pair is judged at 10 ms.
    // The slow run below is 30 ms slower: regressed against either minimum.
    const alike = await json(`/v1/runs/${base}/compare/${same}?minLatency=10ms`);
    expect(alike.status).toBe(200);
    expect(alike.body.verdict).toBe("unchanged");
    expect(alike.body.regions).toEqual([
      { region: "all", baselineRequests: 80, candidateRequests: 80 },
      { region: "weur", baselineRequests: 40, candidateRequests: 40 },
      { region: "wnam", baselineRequests: 40, candidateRequests: 40 },
    ]);
    expect(alike.body.metrics).toHaveLength(3 * 6);

    const name = `main-${crypto.randomUUID().slice(0, 8)}`;
    expect(await saveBaseline(name, base)).toMatchObject({ status: 201, body: { name, runId: base } });
    const slower = await json(`/v1/runs/${name}/compare/${slow}`);
    expect(slower.body.baseline).toEqual({ id: base, baseline: name, status: "passed" });
    expect(slower.body.verdict).toBe("regressed");
    const p50 = row(slower.body, "p50");
    expect(p50).toMatchObject({ verdict: "regressed", method: "bootstrap", unit: "ms" });
    expect(p50.change).toBeGreaterThan(20);
    expect(p50.interval[0]).toBeGreaterThan(p50.minEffect);
    // Same target behaviour otherwise: no failures either side, so the error rate did not move.
    expect(row(slower.body, "error_rate")).toMatchObject({ baseline: 0, candidate: 0, verdict: "unchanged" });

    // The other way round, the slow run is the baseline and the fast one improved.
    expect((await json(`/v1/runs/${slow}/compare/${name}`)).body.verdict).toBe("improved");
  });

  it("takes the practical minimums from the query string", async () => {
    const { id } = await createRun({ rate: 20 });
    await waitForStatus(id);
    const result = await json(`/v1/runs/${id}/compare/${id}?minEffect=10%25&minLatency=2ms&minRate=1%25&confidence=99%25`);
    expect(result.body.options).toMatchObject({ minRelative: 0.1, minLatencyMs: 2, minRate: 0.01, confidence: 0.99 });
    expect(result.body.verdict).toBe("unchanged");
  });

  it("answers problems for bad parameters, unknown runs or names, and runs still going", async () => {
    const bad = await json("/v1/runs/r-aaaaaa-00000000/compare/r-aaaaaa-00000001?minEffect=5&trend=bogus");
    expect(bad.status).toBe(400);
    expect(bad.body.problems.map((p: any) => p.field)).toEqual(["minEffect", "trend"]);
    expect((await json("/v1/runs/r-aaaaaa-00000000/compare/r-aaaaaa-00000001")).body).toMatchObject({
      status: 404,
      detail: "run r-aaaaaa-00000000 does not exist",
    });
    expect((await json("/v1/runs/no-such-baseline/compare/r-aaaaaa-00000001")).body).toMatchObject({
      status: 404,
      detail: "baseline no-such-baseline does not exist",
    });

    const { id } = await createRun({ duration: "3s" });
    const going = await json(`/v1/runs/${id}/compare/${id}`);
    expect(going.status).toBe(409);
    expect(going.body.type).toMatch(/run-not-finished$/);
    expect((await saveBaseline("too-early", id)).status).toBe(409);
    await waitForStatus(id);
  });
});

describe("baselines", () => {
  it("saves a name, moves it to a later run, and lists it with its run", async () => {
    const [first, second] = await Promise.all([createRun({ rate: 10 }), createRun({ rate: 10 })]);
    await Promise.all([waitForStatus(first.id), waitForStatus(second.id)]);
    const name = `nightly-${crypto.randomUUID().slice(0, 8)}`;
    expect((await saveBaseline(name, first.id)).status).toBe(201);
    expect(await saveBaseline(name, second.id)).toMatchObject({ status: 200, body: { runId: second.id, previousRunId: first.id } });
    const listed = (await json("/v1/baselines")).body.baselines.find((b: any) => b.name === name);
    expect(listed).toMatchObject({ runId: second.id, run: { name: "workers test", status: "passed" } });
    expect(Date.parse(listed.createdAt)).toBeGreaterThan(Date.now() - 60_000);

    const bad = await json("/v1/baselines/r-looks-like-a-run", { method: "PUT", body: JSON.stringify({ runId: 42 }) });
    expect(bad.status).toBe(400);
    expect(bad.body.problems.map((p: any) => p.field)).toEqual(["name", "runId"]);
  });

  it("refuses a run whose own verdict did not pass: a failed run never becomes the baseline", async () => {
    const failing = await createRun({ rate: 10, thresholds: { http_reqs: ["count<1"] } });
    await waitForStatus(failing.id);
    const name = `guarded-${crypto.randomUUID().slice(0, 8)}`;
    const refused = await saveBaseline(name, failing.id);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ detail: `run ${failing.id} ended failed; only a run whose own verdict passed can be a baseline` });
    expect((await json("/v1/baselines")).body.baselines.find((b: any) => b.name === name)).toBeUndefined();
  });
});
