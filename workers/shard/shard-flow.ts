/**
 * The flow a shard runs, built once per LoadShard instance: custom steps or a built-in
 * scenario with its seed set read from R2 (then, never per request), or a k6 script's
 * bundle run in an isolate of its own (script-flow.ts). The object restores the flow's
 * checkpointed state itself.
 */
import type { ShardAssignment } from "../../core/run/protocol.ts";
import { parseSeedSet, seedObjectKey, type SeedData } from "../../core/data/seed-set.ts";
import { SETUP_DATA, scriptObjectKey } from "../../core/spec/script-schema.ts";
import { outbound } from "../outbound/outbound-fetch.ts";
import { targetPolicy } from "../outbound/policies.ts";
import { segmentedIndex, shardVuPool } from "../../core/schedule/vu-ids.ts";
import { sliceWeight } from "../../core/schedule/shard-slice.ts";
import { createFlow } from "../../scenarios/create-flow.ts";
import type { Flow } from "../../scenarios/flow.ts";
import type { Env } from "../env.ts";
import { scriptEntrypoint, scriptFlow, type ScriptModules } from "./script-flow.ts";
import type { BrowserContextOptions } from "@cloudflare/playwright";
import { ShardBrowser, type SessionEvent, type SessionStore } from "./browser-session.ts";
import { systemClock } from "./engine-types.ts";
import { screenshotKey } from "./browser-host.ts";

/** The bindings a flow is built from. */
export type FlowBindings = Pick<Env, "SEEDS" | "LOADER" | "BROWSER" | "ALLOWED_TARGETS" | "EDGELOAD_MODE" | "TARGET_VERIFICATION">;

/**
 * The flow for this run, and whether its seed set was read from R2. A seed set that is
 * missing or unreadable fails the shard loudly: the coordinator checked it exists when
 * the run was created.
 */
export async function buildShardFlow(env: FlowBindings, assignment: ShardAssignment, storage?: SessionStore): Promise<{ flow: Flow; seedLoaded: boolean }> {
  let data: SeedData | null = null;
  const seed = assignment.spec.scenario?.seed ?? assignment.spec.data?.seed;
  if (seed) {
    const object = await env.SEEDS.get(seedObjectKey(seed));
    if (!object) throw new Error(`seed set ${seed} is not in R2`);
    const parsed = parseSeedSet(await object.json());
    if (!parsed.ok) throw new Error(`seed set ${seed} does not validate: ${parsed.problems[0]?.detail}`);
    data = parsed.data;
  }
  const flow = assignment.spec.script
    ? await scriptFlowOf(env, assignment, storage)
    : createFlow(assignment.spec, data, { index: assignment.shard.index, count: assignment.slice.shards });
  return { flow, seedLoaded: Boolean(seed) };
}

/** A k6 script's flow: its bundle read from R2, run in an isolate of its own. */
async function scriptFlowOf(env: FlowBindings, assignment: ShardAssignment, storage: SessionStore | undefined): Promise<Flow> {
  const spec = assignment.spec;
  const script = spec.script!;
  if (!env.LOADER) throw new Error("this deployment has no Worker Loader binding (LOADER): it cannot run k6 scripts");
  const object = await env.SEEDS.get(scriptObjectKey(script.bundle));
  if (!object) throw new Error(`script bundle ${script.bundle} is not in R2`);
  const vuIdOffset = assignment.part?.vuIdOffset ?? 0;
  const entry = scriptEntrypoint(env.LOADER, `${assignment.runId}:${script.bundle}`, await object.json<ScriptModules>());
  return scriptFlow(entry, {
    script,
    scenario: { name: assignment.part?.scenario ?? "default", executor: spec.executor, startTimeMs: (assignment.part?.windowOffsetS ?? 0) * 1000 },
    vuIdOffset,
    pool: shardVuPool({ offset: vuIdOffset, shard: assignment.shard, slice: assignment.slice, preAllocatedVUs: spec.preAllocatedVUs }),
    // Its weight in its scenario's plan: its part of options.rps, in proportion (k6-compat/runtime/rps-limit.ts).
    shard: { index: assignment.part?.runShard ?? assignment.shard.index, ofScenario: sliceWeight(assignment.slice) / assignment.slice.cycle },
    iterationInTest: segmentedIndex(assignment.slice),
    tags: spec.tags,
    steps: spec.steps.map((s) => s.name),
    setupData: spec.setupData?.[SETUP_DATA] ?? null,
    outbound: outbound(targetPolicy(env, assignment.ownedHosts)),
    ...(env.BROWSER && storage ? { browser: shardBrowserPort(env.BROWSER, env.SEEDS, assignment, storage) } : {}),
  });
}

/**
 * The shard's browser for k6/browser: its Browser Run session, acquired at the first browser
 * call (a script without one never acquires) and not before the shard's turn (its t0 plus
 * browserStartMs), and its screenshots kept in R2 under the run. `onEvent`: for tests.
 */
export function shardBrowserPort(
  binding: Fetcher,
  bucket: R2Bucket,
  assignment: ShardAssignment,
  storage: SessionStore,
  onEvent?: (event: SessionEvent, sessionId: string) => void,
) {
  const turn = { notBeforeMs: assignment.t0Ms + (assignment.browserStartMs ?? 0), clock: systemClock };
  const session = new ShardBrowser(binding, storage, onEvent, turn);
  return {
    newContext: (options?: unknown) => session.newContext(options as BrowserContextOptions | undefined),
    identity: () => session.identity(),
    saveScreenshot: async (name: string, bytes: Uint8Array, contentType: string) => {
      await bucket.put(screenshotKey(assignment.runId, assignment.shard.index, name), bytes, { httpMetadata: { contentType } });
    },
    endInvocation: (final: boolean) => session.endInvocation(final),
  };
}
