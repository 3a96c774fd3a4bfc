/**
 * 2. generator: the local edgeload stack and k6, one after the other, sending the same
 *    constant-arrival-rate load to the same local target with a fixed delay: achieved
 *    rate, dropped, p50/p99 of http_req_duration, and generator CPU seconds per 1,000
 *    requests (from /proc of the generator processes), with the ratio edgeload/k6.
 *
 *    Also the workerd fetch floor: a bare closed loop of fetch() in its own workerd
 *    (workers/fetch-floor), i.e. what any fetch-based generator pays in workerd;
 *    paced on the same schedule, in a Worker and in a Durable Object.
 *
 *    And client_delay: how long the generator's own event loop held responses before
 *    timing them (core/metrics/loop-delay.ts), its share of edgeload's latencies.
 *
 * Why: a generator's latencies must read as k6's do against the same target, at a CPU cost
 * per request not far above what any fetch-based generator pays in workerd. The floors split
 * the gap to k6 into workerd's own fetch path and what edgeload adds; the crosscheck's
 * verdict says whether the two runs' figures agree within its tolerances.
 *
 *    Against two targets (`--targets workerd,native`): the local stack's target Worker, and a
 *    native one (Go, scripts/bench/native-target) whose serving costs almost nothing, so what
 *    differs between clients there is the clients' own.
 *
 *    With `--baseline REV`, the same edgeload run also goes through that revision's own stack
 *    (baseline-stack.ts), in the order baseline, this tree, …, this tree, baseline at each
 *    rate, so drift over the round weighs on both alike: CPU per request and p95 before/after.
 *
 *    The clients are run by generator-clients.ts, the tables printed by generator-report.ts.
 *
 *   npm run bench -- generator [--rates 100,300,1000] [--targets workerd,native] [--duration 15s] [--delay 20] [--shards N] [--baseline REV]
 */
import { startLocalStack, type LocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";
import { edgeloadRun, fetchFloor, runK6, type GeneratorResult } from "./generator-clients.ts";
import { findK6 } from "../../cli/k6-binary.ts";
import { startBaselineStack, type BaselineStack } from "./baseline-stack.ts";
import { checkAgainstFloor, formatFloorBar } from "./per-second.ts";
import { startNativeTarget, type NativeTarget } from "./native-target.ts";
import {
  type BeforeAfterRow,
  crosscheckVerdict,
  GENERATOR_TARGETS,
  type GeneratorTarget,
  EVERY_RATE_LEGEND,
  everyRateTable,
  printBeforeAfter,
  type RateRow,
  type Round,
  roundTable,
} from "./generator-report.ts";

/** Where the load goes: the local stack's target Worker, or the native loopback target. */
export { GENERATOR_TARGETS, type GeneratorTarget };

export interface GeneratorBenchOptions {
  /** Each rate (requests/s) is one round: edgeload, k6, then the three floors. */
  readonly rates: readonly number[];
  /** Of each measured run, as a spec writes it (`15s`). */
  readonly duration: string;
  /** The target's /delay?ms= for every request. */
  readonly delayMs: number;
  /** `--shards N` forces a shard count; null lets the plan make them, as for a user's run. */
  readonly shards: number | null;
  /** A git revision whose own stack runs the same edgeload load beside this tree's; null for none. */
  readonly baseline: string | null;
  /** Each target is one pass over the rates. */
  readonly targets: readonly GeneratorTarget[];
}

export async function generatorBench({ rates, duration, delayMs, shards, baseline: baselineRev, targets }: GeneratorBenchOptions): Promise<void> {
  const k6 = findK6();
  const stack = await startLocalStack({ persist: false });
  let baseline: BaselineStack | null = null;
  let native: NativeTarget | null = null;
  try {
    if (targets.includes("native")) native = await startNativeTarget();
    const targetOf = (name: GeneratorTarget): LoadTarget =>
      name === "native" && native
        ? { name, url: native.url, cpuS: native.cpuS }
        : { name, url: stack.targetUrl, cpuS: () => cpuSeconds(stack.processes.target) };
    const path = `/delay?ms=${delayMs}`;
    for (const name of targets) await (await fetch(targetOf(name).url + path)).arrayBuffer(); // warm the targets
    if (baselineRev) {
      baseline = await startBaselineStack(baselineRev);
      await edgeloadRun(baseline.stack, stack.targetUrl, path, rates[0]!, "4s", shards); // warmed as this tree's is below
    }
    const beforeAfter: BeforeAfterRow[] = [];
    // A fresh stack is cold (JIT, D1 and object storage on first use): a first measured run
    // paid it alone, k6 — a native binary, run second — never did. And so is the first
    // sustained load on a stack and a target: the floors, run last in each section, never met
    // it. With a 4 s warm-up, the first 15 s run at 100/s on the native target read 16–35
    // requests over 24 ms on three fresh stacks, the runs after it 4–13 (the floor's first
    // loop there, 15–16, its later ones 4–9). So one unmeasured run as long as a measured
    // one, on each target.
    for (const name of targets) await edgeloadRun(stack, targetOf(name).url, path, rates[0]!, duration, shards);
    const atRates: RateRow[] = [];
    for (const target of targets.map(targetOf))
      for (const rate of rates) {
        console.log(
          `\n## Generator: edgeload (local stack, ${shards ?? "planned"} shards) vs k6, constant-arrival-rate ${rate}/s for ${duration}, ${target.name} target, delay ${delayMs} ms\n`,
        );
        const { round, again, base } = await measureRound({ stack, k6, baseline, target, path, duration, shards }, rate);
        if (again) beforeAfter.push({ target: target.name, rate, now: [round.edge, again], base });
        console.log(roundTable(round));
        const verdict = crosscheckVerdict(round);
        const bar = formatFloorBar(checkAgainstFloor(round.edge, round.pacedInObject));
        console.log(`  against the paced floor in an object: ${bar}`);
        const { edge, k6: k6Result, paced, pacedInObject, floor } = round;
        atRates.push({ target: target.name, rate, clients: [edge, k6Result, paced, pacedInObject, { ...floor, name: "closed floor" }], verdict, bar });
      }
    console.log(`\n## Generator at every rate: edgeload / k6 / the workerd floors\n`);
    console.log(everyRateTable(atRates));
    console.log(EVERY_RATE_LEGEND);
    if (baseline) printBeforeAfter(baseline.label, beforeAfter);
  } finally {
    await Promise.all([stack.stop(), baseline?.stack.stop(), native?.stop()]);
  }
}

/** A target the load goes to: its URL and the CPU its process has spent so far. */
interface LoadTarget {
  readonly name: GeneratorTarget;
  readonly url: string;
  readonly cpuS: () => number;
}

/** What every round of one bench shares: the stacks, k6, the target and the run's shape. */
interface RoundContext {
  readonly stack: LocalStack;
  readonly k6: string;
  readonly baseline: BaselineStack | null;
  readonly target: LoadTarget;
  readonly path: string;
  readonly duration: string;
  readonly shards: number | null;
}

const coolDown = () => new Promise((r) => setTimeout(r, 3000));

/**
 * One round at `rate`: edgeload, k6 and the three floors one after the other, 3 s apart,
 * each with the target's CPU over its run. With a baseline, the order is baseline, this
 * tree, …, this tree again (`again`), baseline (`base`), so drift weighs on both alike.
 */
async function measureRound(
  { stack, k6, baseline, target, path, duration, shards }: RoundContext,
  rate: number,
): Promise<{ round: Round; again: GeneratorResult | null; base: GeneratorResult[] }> {
  const { url: targetUrl, cpuS: targetCpuS } = target;
  // The target's CPU over each client's run, next to the client's own.
  const withTargetCpu = async (measure: () => Promise<GeneratorResult>): Promise<GeneratorResult> => {
    const before = targetCpuS();
    const result = await measure();
    return { ...result, targetCpuS: targetCpuS() - before };
  };
  const base: GeneratorResult[] = [];
  const baselineRun = async () => {
    if (!baseline) return;
    base.push(await edgeloadRun(baseline.stack, targetUrl, path, rate, duration, shards));
    await coolDown();
  };
  await baselineRun();
  const edge = await withTargetCpu(() => edgeloadRun(stack, targetUrl, path, rate, duration, shards));
  await coolDown(); // between the two
  const k6Result = await withTargetCpu(() => runK6(k6, targetUrl + path, rate, duration));
  await coolDown();
  const floor = await withTargetCpu(() => fetchFloor(targetUrl + path, Math.min(edge.requests, 10_000)));
  await coolDown();
  const paced = await withTargetCpu(() => fetchFloor(targetUrl + path, Math.min(edge.requests, 10_000), rate));
  await coolDown();
  const pacedInObject = await withTargetCpu(() => fetchFloor(targetUrl + path, Math.min(edge.requests, 10_000), rate, true));
  let again: GeneratorResult | null = null;
  if (baseline) {
    await coolDown();
    again = await edgeloadRun(stack, targetUrl, path, rate, duration, shards);
    await coolDown();
    await baselineRun();
  }
  return { round: { edge, k6: k6Result, floor, paced, pacedInObject }, again, base };
}
