/**
 * Admitting a run: the one path every run takes, whether `POST /v1/runs` or a schedule's
 * turn (coordinator/schedule/) asks. The spec is validated and planned under the
 * deployment's caps, its seed set or script checked, its target held against the
 * allow-list (and its push outputs against theirs), its cost against `maxCost`, its host to a
 * standing proof of ownership where the deployment asks one (target-verification.ts), the
 * active runs against the cap; then the run's
 * RunCoordinator creates it. Each refusal is an ApiError that knows its HTTP answer.
 */
import { ArrivalSchedule } from "../../core/schedule/arrival-schedule.ts";
import { planRun, type Plan } from "../../core/plan/plan.ts";
import { preflight, type Preflight } from "../../core/plan/preflight.ts";
import { parseRunSpec, type Problem, type RunSpec } from "../../core/spec/run-spec.ts";
import { seedObjectKey, type SeedKind } from "../../core/data/seed-set.ts";
import { unknownDataField } from "../../core/data/seed-records.ts";
import { modeOf } from "../../core/spec/target-policy.ts";
import { pushOutputPolicy, targetPolicy } from "../../workers/outbound/policies.ts";
import type { RunStatus } from "../../core/run/protocol.ts";
import { SCENARIOS } from "../../scenarios/catalog.ts";
import type { RoutesEnv } from "./routes-env.ts";
import { limitsOf } from "./policy.ts";
import { forbidden, invalidSpec, tooManyRuns } from "./api-errors.ts";
import { countActiveRuns } from "../store/results-store.ts";
import { coordinatorFor } from "./coordinator-stub.ts";
import { checkScripts } from "./scripts-api.ts";
import { newRunId } from "./run-id.ts";
import { requireOwnership } from "./target-verification.ts";

/** A run spec (parsed JSON), validated and planned under this deployment's caps. */
export function plannedRun(input: unknown, env: RoutesEnv): { spec: RunSpec; plan: Plan } {
  const parsed = parseRunSpec(input);
  if (!parsed.ok) throw invalidSpec(parsed.problems);
  const planned = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, limitsOf(env));
  if (!planned.ok) throw forbidden("cap-exceeded", "Run exceeds this deployment's caps", planned.problems.map((p) => p.detail).join("; "), planned.problems);
  return { spec: parsed.spec, plan: planned.plan };
}

/**
 * Everything but the concurrency cap and the creation: what a schedule checks once when it
 * is created, so a schedule that could never run is refused then.
 */
export async function checkRun(input: unknown, env: RoutesEnv): Promise<{ spec: RunSpec; plan: Plan; estimate: Preflight; ownedHosts?: readonly string[] }> {
  const { spec, plan } = plannedRun(input, env);
  const seedProblem = (await checkSeed(spec, env)) ?? (await checkScripts(spec, env));
  if (seedProblem) throw invalidSpec([seedProblem]);
  const targetRefusal = targetPolicy(env)(new URL(spec.target));
  if (targetRefusal) throw forbidden("target-not-allowed", "Target not allowed", targetRefusal, [{ field: "target", detail: targetRefusal }]);
  const outputProblems = refusedOutputs(spec, env);
  if (outputProblems.length) throw forbidden("output-not-allowed", "Push output not allowed", outputProblems.map((p) => p.detail).join("; "), outputProblems);
  const estimate = preflight(spec, plan);
  if (estimate.overBudget) throw invalidSpec([estimate.overBudget]);
  // Last, as it may read DNS and the target: a run refused for anything else costs no lookup.
  const ownedHosts = await requireOwnership(env, new URL(spec.target), Date.now());
  return { spec, plan, estimate, ...(ownedHosts ? { ownedHosts } : {}) };
}

export interface AdmittedRun {
  readonly id: string;
  readonly spec: RunSpec;
  readonly plan: Plan;
  readonly estimate: Preflight;
  readonly t0Ms: number;
  readonly status: RunStatus;
}

/** Admits and creates a run, or throws the ApiError that refuses it. */
export async function admitRun(input: unknown, env: RoutesEnv): Promise<AdmittedRun> {
  const { spec, plan, estimate, ownedHosts } = await checkRun(input, env);
  const limits = limitsOf(env);
  if ((await countActiveRuns(env.DB)) >= limits.maxConcurrentRuns) throw tooManyRuns(limits.maxConcurrentRuns);
  const id = newRunId();
  const { t0Ms, status } = await coordinatorFor(env, id).create({
    runId: id,
    spec,
    plan,
    mode: modeOf(env.EDGELOAD_MODE),
    ...(ownedHosts ? { ownedHosts } : {}),
  });
  return { id, spec, plan, estimate, t0Ms, status };
}

/**
 * The scenario's seed set must exist and be of the kind the scenario reads, before any
 * shard starts (shards read it from R2 at their first invocation).
 */
async function checkSeed(spec: RunSpec, env: RoutesEnv): Promise<Problem | null> {
  for (const named of spec.scenarios ?? []) {
    const problem = await checkSeed(named.spec, env);
    if (problem) return { ...problem, field: `scenarios.${named.name}.${problem.field}` };
  }
  if (spec.data) return checkDataSeed(spec, spec.data.seed, env);
  const seed = spec.scenario?.seed;
  if (!seed) return null;
  const head = await env.SEEDS.head(seedObjectKey(seed));
  if (!head) return { field: "scenario.seed", detail: `no seed set named ${seed} (see GET /v1/seeds, or upload one with PUT /v1/seeds/${seed})` };
  const wanted = SCENARIOS[spec.scenario!.name]?.seedKind;
  const kind = head.customMetadata?.kind ?? "access-tokens";
  if (wanted && kind !== wanted)
    return { field: "scenario.seed", detail: `seed set ${seed} holds ${kind}; the ${spec.scenario!.name} scenario reads ${wanted}` };
  return null;
}

/** The spec's `data` seed set exists, and every `{{data.FIELD}}` is a field of its kind. */
async function checkDataSeed(spec: RunSpec, seed: string, env: RoutesEnv): Promise<Problem | null> {
  const head = await env.SEEDS.head(seedObjectKey(seed));
  if (!head) return { field: "data.seed", detail: `no seed set named ${seed} (see GET /v1/seeds, or upload one with PUT /v1/seeds/${seed})` };
  return unknownDataField(spec.steps, seed, (head.customMetadata?.kind ?? "access-tokens") as SeedKind);
}

/** The push outputs the deployment's ALLOWED_OUTPUTS does not allow, one problem each. */
function refusedOutputs(spec: RunSpec, env: RoutesEnv): Problem[] {
  const policy = pushOutputPolicy(env);
  return (spec.outputs ?? []).flatMap((output, i) => {
    const refusal = policy(new URL(output.url));
    return refusal ? [{ field: `outputs[${i}].url`, detail: refusal }] : [];
  });
}
