/**
 * `POST /v1/probe` (issue 49): the target's time to first byte from each region a run would
 * use, through one shard per region — what `edgeload plan --probe --url …` plans with, where
 * a probe from the command's own machine would measure the wrong network.
 *
 * The body is a run spec, admitted as far as `POST /v1/runs` would before any load: valid and
 * within the deployment's caps, its target on ALLOWED_TARGETS, its owner's proof where the
 * deployment asks one (target-verification.ts). Then one LoadShard per region of its plan
 * (named `probe-<random>/<region>`, placed with the region's location hint as a run's shards
 * are) times PROBE_REQUESTS requests (core/plan/latency-probe.ts) and answers; it stores
 * nothing. A region whose shard could not time the target says why, and the answer's p95 is
 * the slowest region's: a plan at that latency never has too few shards anywhere.
 *
 * It sends requests to a target, so it needs the full token (access.ts READ_ONLY_POSTS does
 * not list it): at most 21 a region.
 */
import { Hono } from "hono";
import { PROBE_BUDGET_MS, PROBE_REQUESTS, probeRequestOf, type RegionProbe } from "../../core/plan/latency-probe.ts";
import { targetPolicy } from "../../workers/outbound/policies.ts";
import { badRequest, forbidden } from "./api-errors.ts";
import { plannedRun } from "./run-admission.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { requireOwnership } from "./target-verification.ts";

type App = { Bindings: RoutesEnv };

export const probeApi = new Hono<App>();

probeApi.post("/", async (c) => {
  const body = await c.req.json().catch(() => {
    throw badRequest("the body must be a JSON run spec", [{ field: "(body)", detail: "not valid JSON" }]);
  });
  const { spec, plan } = plannedRun(body, c.env);
  const target = new URL(spec.target);
  const refusal = targetPolicy(c.env)(target);
  if (refusal) throw forbidden("target-not-allowed", "Target not allowed", refusal, [{ field: "target", detail: refusal }]);
  const ownedHosts = await requireOwnership(c.env, target, Date.now());
  const request = probeRequestOf(spec);
  const regions = [...new Set(plan.shards.map((s) => s.region))];
  const probeId = `probe-${crypto.randomUUID()}`;
  const answers = await Promise.all(
    regions.map(async (region): Promise<RegionProbe> => {
      const shard = c.env.LOAD_SHARD.get(c.env.LOAD_SHARD.idFromName(`${probeId}/${region}`), { locationHint: region as DurableObjectLocationHint });
      try {
        const probe = await shard.probe(request, PROBE_REQUESTS, PROBE_BUDGET_MS, ownedHosts);
        return { region, colo: probe.colo, figures: probe.figures, error: probe.error };
      } catch (error) {
        return { region, colo: null, figures: null, error: `its shard did not answer: ${error instanceof Error ? error.message : String(error)}` };
      }
    }),
  );
  const timed = answers.flatMap((a) => (a.figures ? [a.figures.p95Ms] : []));
  return c.json({ request, regions: answers, p95Ms: timed.length ? Math.max(...timed) : null });
});
