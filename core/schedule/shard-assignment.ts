/**
 * What each shard of a run is told to do: its share of the plan, the common start, its
 * deadline and the spec it runs. In a run of named scenarios each shard runs its own
 * scenario's spec from that scenario's start (see core/spec/named-scenarios.ts), its VUs
 * numbered after the scenarios before it (vu-ids.ts). A browser scenario's shard is told when
 * it may acquire its browser (browserStartMs), the run's starts spread by the planner.
 */
import type { Plan } from "../plan/plan.ts";
import { shardsUnder } from "../plan/aggregation-tree.ts";
import type { Mode, ShardAssignment } from "../run/protocol.ts";
import type { RunSpec } from "../spec/types.ts";
import { scenarioVuOffsets, vuIdsNeeded } from "./vu-ids.ts";
import { afterEndMs } from "./graceful-stop.ts";
import { parseThresholds } from "../metrics/thresholds.ts";
import { EXPECTED_RESPONSE_DURATION, subMetricFilters, type SubMetricFilter } from "../metrics/sub-metrics.ts";
import { isScriptRun } from "../spec/script-schema.ts";
import { customMetricKinds } from "../spec/metrics-schema.ts";
import { shardSlices } from "./shard-slice.ts";
import { browserStartsByShard } from "../plan/browser-sessions.ts";

/**
 * How long before t0 each shard wakes to warm up (workers/shard/warm-up.ts): its colo, its
 * flow and seed set, one uncounted request to open its connection. Enough for a seed read
 * and one request; shorter than every start lead the coordinator gives.
 */
export const WARM_UP_LEAD_MS = 1_000;

export interface AssignmentInput {
  readonly runId: string;
  /** The full spec (secrets and setup values included). */
  readonly spec: RunSpec;
  readonly plan: Plan;
  readonly t0Ms: number;
  readonly mode: Mode;
  readonly flushGraceMs: number;
  /** The hosts whose proof of ownership stood when the run was admitted (RunRecord.ownedHosts). */
  readonly ownedHosts?: readonly string[];
}

/**
 * In a run with an aggregation tree (a large run) each shard stores its state, and sends its
 * windows, every fourth window instead of every one: a storage row is billed per write, and
 * a row a shard-second was most of a large run's storage bill (issue 41). What it costs:
 * the dashboards see each window up to 3 s later, and a shard that restarts loses the
 * results of up to three held windows besides its open ones. An arrival-rate shard counts
 * their iterations interrupted when it resumes (its stored cursor says which); a VU shard has
 * no cursor and restarts its VU loops, counting nothing for them (docs/architecture.md,
 * "Shards"). A flat run (at most one fan-in of shards) writes each.
 */
export const WINDOWS_PER_WRITE_IN_A_TREE = 4;

/**
 * Whether a shard writing every `windowsPerWrite` windows writes at the close of `windowS`
 * by its own phase: shards write at phases of their own (`shardIndex`), so a receiver hears
 * from a share of its children each second, not from all of them every few seconds.
 */
export function writesAtPhase(windowS: number, shardIndex: number, windowsPerWrite: number): boolean {
  return (windowS + shardIndex) % windowsPerWrite === windowsPerWrite - 1;
}

/** Shards' window closes (and so their stores and flushes) are spread over this much of each second. */
export const WINDOW_CLOSE_SPREAD_MS = 600;

/** How far into the next second shard `shardIndex` of `shards` (its slice's `shards`) closes a window. */
export function windowCloseLagMs(shardIndex: number, shards: number): number {
  return (WINDOW_CLOSE_SPREAD_MS * shardIndex) / Math.max(1, shards);
}

/**
 * A k6 script's shard runs this many iterations on one session of its Dynamic Worker
 * (workers/shard/script-flow.ts): the call that opens a session is billed as a Workers
 * request and the iterations on it are not, so a session per iteration priced a script run
 * at $0.30 a million iterations more than a spec (issue 41). Sessions are renewed because a
 * session lives within its opening call, and so within one invocation's CPU limit (30 s by
 * default): a thousand iterations of even 10 ms of script each stay well inside it.
 */
export const ITERATIONS_PER_SCRIPT_SESSION = 1_000;

/**
 * One assignment per shard of the plan, in the plan's order. Each carries its own slice of
 * the plan's weights (shard-slice.ts), not the whole list: an assignment is the same size
 * whether the plan has ten shards or ten thousand (pinned by shard-assignment.test.ts).
 */
export function shardAssignments(input: AssignmentInput): ShardAssignment[] {
  const { runId, spec, plan, t0Ms, mode, flushGraceMs } = input;
  // What every shard of the run carries besides its own plan: the sub-metrics to record, the hosts proved.
  const subMetrics = { ...runSubMetrics(spec), ...(input.ownedHosts ? { ownedHosts: input.ownedHosts } : {}) };
  const browserStarts = browserStartsByShard(spec, plan);
  /** The shard's browser start after its own t0 (its scenario's start), when it has a browser. */
  const browserStart = (runShard: number, startMs: number) => {
    const at = browserStarts.get(runShard);
    return at === undefined ? {} : { browserStartMs: at - startMs };
  };
  if (!plan.scenarios?.length) {
    const tree = plan.tree;
    const slices = shardSlices(plan.weights);
    return plan.shards.map((shard) => ({
      runId,
      shard,
      slice: slices[shard.index]!,
      iterationsPerInvocation: plan.iterationsPerInvocation,
      t0Ms,
      deadlineMs: t0Ms + spec.durationMs + afterEndMs(spec),
      flushGraceMs,
      spec,
      mode,
      ...subMetrics,
      ...browserStart(shard.index, 0),
      ...(tree ? { reportsTo: tree.parentOfShard[shard.index]!, windowsPerWrite: WINDOWS_PER_WRITE_IN_A_TREE } : {}),
    }));
  }
  const vuIdOffsets = scenarioVuOffsets(plan.scenarios.map((s) => vuIdsNeeded(s.plan)));
  return plan.scenarios.flatMap((planned, i) => {
    const scenario = spec.scenarios?.find((s) => s.name === planned.name);
    if (!scenario) throw new Error(`the plan has scenario ${planned.name}, the spec does not`);
    const startMs = t0Ms + scenario.startMs;
    // Setup values are the run's: every scenario's steps may use them.
    const scenarioSpec: RunSpec = { ...scenario.spec, setupData: spec.setupData ?? {} };
    const slices = shardSlices(planned.plan.weights);
    return planned.plan.shards.map((shard) => ({
      runId,
      shard,
      slice: slices[shard.index]!,
      iterationsPerInvocation: planned.plan.iterationsPerInvocation,
      t0Ms: startMs,
      deadlineMs: startMs + scenario.spec.durationMs + afterEndMs(scenario.spec),
      flushGraceMs,
      spec: scenarioSpec,
      mode,
      ...subMetrics,
      ...browserStart(planned.firstShard + shard.index, scenario.startMs),
      part: {
        scenario: scenario.name,
        runShard: planned.firstShard + shard.index,
        stepOffset: scenario.stepOffset,
        windowOffsetS: scenario.startMs / 1000,
        vuIdOffset: vuIdOffsets[i]!,
      },
    }));
  });
}

/** The sub-metrics the run's thresholds name, for every shard (a scenario's spec lacks the run's thresholds). */
function runSubMetrics(spec: RunSpec): { subMetrics?: SubMetricFilter[] } {
  const filters = runSubMetricFilters(spec);
  return filters.length ? { subMetrics: filters } : {};
}

/** The k6 sub-metrics a run records beyond its cells: its thresholds', and for a script the one k6 always shows. */
export function runSubMetricFilters(spec: RunSpec): SubMetricFilter[] {
  const parsed = parseThresholds(spec.thresholds, customMetricKinds(spec));
  const filters = parsed.ok ? subMetricFilters(parsed.value) : [];
  // k6 shows this one for every script, threshold or not.
  if (isScriptRun(spec) && !filters.some((f) => f.name === EXPECTED_RESPONSE_DURATION.name)) filters.push(EXPECTED_RESPONSE_DURATION);
  return filters;
}

/** What starts an aggregator of a run's tree: the run as its shards' assignments are made, and which node it is. */
export interface TreeStart {
  /** The plan's shards trimmed to this node's (subtreeStart); its tree whole. */
  readonly run: AssignmentInput;
  readonly index: number;
}

/** The start of aggregator `index`: the run with the plan's shards trimmed to those under it. */
export function subtreeStart(run: AssignmentInput, index: number): TreeStart {
  const byIndex = new Map(run.plan.shards.map((s) => [s.index, s]));
  const shards = shardsUnder(run.plan.tree!, index).map((i) => byIndex.get(i)!);
  return { run: { ...run, plan: { ...run.plan, shards } }, index };
}
