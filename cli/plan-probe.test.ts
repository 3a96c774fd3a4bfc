/**
 * `plan --probe` with a deployment named (issue 49): the plan is sized at the slowest region's
 * p95, as the deployment's shards measured it (POST /v1/probe); a deployment without the route
 * is probed from here instead, and says so; a deployment none of whose regions timed the target
 * fails the command, naming each region's reason. No network: the deployment's answer and this
 * machine's fetch are stand-ins.
 */
import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { CliError } from "./connection.ts";
import type { DeploymentProbe } from "../core/plan/latency-probe.ts";
import { deploymentLatency, plannedLatency } from "./plan-probe.ts";

const parsed = parseRunSpec({
  target: "https://api.example.com",
  steps: [{ path: "/health" }],
  executor: "constant-arrival-rate",
  rate: 100,
  duration: "1m",
  regions: ["wnam", "weur"],
});
if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
const spec = parsed.spec;
const figures = (p95Ms: number) => ({ requests: 20, p50Ms: p95Ms - 5, p95Ms, maxMs: p95Ms + 5, statuses: { "200": 20 } });
const answer: DeploymentProbe = {
  request: { url: "https://api.example.com/health", method: "GET" },
  regions: [
    { region: "wnam", colo: "SJC", figures: figures(42.5), error: null },
    { region: "weur", colo: "AMS", figures: figures(131.2), error: null },
  ],
  p95Ms: 131.2,
};
const flags = { probe: true, refused: false, deployment: true };
/** This machine's fetch, which a deployment's probe must not use. */
const noFetch = (() => {
  throw new Error("probed from this machine");
}) as unknown as typeof fetch;

describe("plan --probe against a deployment", () => {
  it("plans at the slowest region's p95 (132 ms, weur), naming every region's figure", async () => {
    const latency = await plannedLatency(spec, { expectedLatency: "50ms" }, flags, { deployment: async () => answer, fetcher: noFetch });
    expect(latency.view.plannedMs).toBe(132);
    expect(latency.spec.expectedLatencyMs).toBe(132);
    expect(latency.view.probe).toMatchObject({ from: "the deployment's regions", p95Ms: 131.2, regions: answer.regions });
    expect(latency.basis).toBe("the probe's p95 (the slowest region), the spec says 50 ms");
    expect(latency.probeText).toBe(
      "latency probe: p95 131.2 ms to first byte, the slowest of 2 regions, 20 GET of https://api.example.com/health from one shard in each: wnam 42.5 ms (SJC), weur 131.2 ms (AMS); answered 200×20",
    );
  });

  it("probes from this machine when the deployment has no POST /v1/probe, and says so", async () => {
    const fetcher = (async () => new Response("ok")) as unknown as typeof fetch;
    const latency = await plannedLatency(spec, {}, flags, { deployment: async () => null, fetcher });
    expect(latency.view.probe?.from).toBe("this machine");
    expect(latency.probeText).toContain("from this machine, not from the deployment's regions (the deployment has no POST /v1/probe)");
  });

  it("fails naming each region's reason when no region timed the target", () => {
    const none: DeploymentProbe = {
      ...answer,
      regions: [
        { region: "wnam", colo: "SJC", figures: null, error: "GET https://api.example.com/health answered 0 of 20 requests: connection refused" },
        { region: "weur", colo: null, figures: null, error: "its shard did not answer: timeout" },
      ],
      p95Ms: null,
    };
    expect(() => deploymentLatency(none)).toThrow(CliError);
    expect(() => deploymentLatency(none)).toThrow(
      "--probe: no region of the deployment timed GET https://api.example.com/health (wnam: GET https://api.example.com/health answered 0 of 20 requests: connection refused; weur: its shard did not answer: timeout)",
    );
  });

  it("asks no deployment when none is named", async () => {
    let asked = false;
    const fetcher = (async () => new Response("ok")) as unknown as typeof fetch;
    const deployment = async () => ((asked = true), answer);
    await plannedLatency(spec, {}, { ...flags, deployment: false }, { deployment, fetcher });
    expect(asked).toBe(false);
  });
});
