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
 *   npm run bench -- generator [--rates 100,300,1000] [--targets workerd,native] [--duration 15s] [--delay 20] [--shards N] [--baseline REV]
 */
import { startLocalStack } from "../../cli/local-stack.ts";
import { cpuSeconds } from "../../cli/processes.ts";
import { crosscheck } from "../../core/results/crosscheck.ts";
import { attributeResiduals, renderAttributions, signedMs } from "../../core/results/crosscheck-attribution.ts";
import { edgeloadRun, fetchFloor, runK6, type GeneratorResult } from "./generator-clients.ts";
import { findK6 } from "../../cli/k6-binary.ts";
import { markdownTable } from "./markdown-table.ts";
import { plainTable } from "./plain-table.ts";
import { startBaselineStack, type BaselineStack } from "./baseline-stack.ts";
import { checkAgainstFloor, FLOOR_BAR, formatFloorBar, formatSpread, steadySpread } from "./per-second.ts";
import { startNativeTarget, type NativeTarget } from "./native-target.ts";

/** Where the load goes: the local stack's target Worker, or the native loopback target. */
export type GeneratorTarget = "workerd" | "native";
export const GENERATOR_TARGETS: readonly GeneratorTarget[] = ["workerd", "native"];

/** The columns both tables give each client, in this order: drops, then its latencies. */
const LATENCY_COLUMNS = ["dropped", "p50 ms", "p95 ms", "p99 ms", "p95 by second ms: 1st; steady min / median / max", "client delay p95 / p99 ms"];

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
    const targetOf = (name: GeneratorTarget) =>
      name === "native" && native
        ? { name, url: native.url, cpuS: native.cpuS }
        : { name, url: stack.targetUrl, cpuS: () => cpuSeconds(stack.processes.target) };
    const path = `/delay?ms=${delayMs}`;
    for (const name of targets) await (await fetch(targetOf(name).url + path)).arrayBuffer(); // warm the targets
    if (baselineRev) {
      baseline = await startBaselineStack(baselineRev);
      await edgeloadRun(baseline.stack, stack.targetUrl, path, rates[0]!, "4s", shards); // warmed as this tree's is below
    }
    const beforeAfter: Array<{ target: GeneratorTarget; rate: number; now: GeneratorResult[]; base: GeneratorResult[] }> = [];
    // A fresh stack is cold (JIT, D1 and object storage on first use): a first measured run
    // paid it alone, k6 — a native binary, run second — never did. And so is the first
    // sustained load on a stack and a target: the floors, run last in each section, never met
    // it. With a 4 s warm-up, the first 15 s run at 100/s on the native target read 16–35
    // requests over 24 ms on three fresh stacks, the runs after it 4–13 (the floor's first
    // loop there, 15–16, its later ones 4–9). So one unmeasured run as long as a measured
    // one, on each target.
    for (const name of targets) await edgeloadRun(stack, targetOf(name).url, path, rates[0]!, duration, shards);
    const perK = (r: GeneratorResult) => (r.cpuS / r.requests) * 1000;
    const fmt = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(2));
    const atRates: Array<{ target: GeneratorTarget; rate: number; clients: GeneratorResult[]; verdict: string; bar: string }> = [];
    const row = (r: GeneratorResult) => [
      r.name,
      String(r.requests),
      r.achievedPerS.toFixed(1),
      String(r.dropped),
      fmt(r.p50Ms),
      fmt(r.p95Ms),
      fmt(r.p99Ms),
      formatSpread(r.p95BySecond && steadySpread(r.p95BySecond)),
      r.clientDelayMs ? `${fmt(r.clientDelayMs.p95)} / ${fmt(r.clientDelayMs.p99)}` : "-",
      r.cpuS.toFixed(2),
      perK(r).toFixed(3),
      r.targetCpuS === undefined ? "-" : ((r.targetCpuS / r.requests) * 1000).toFixed(3),
    ];
    for (const { name: targetName, url: targetUrl, cpuS: targetCpuS } of targets.map(targetOf))
      for (const rate of rates) {
        console.log(
          `\n## Generator: edgeload (local stack, ${shards ?? "planned"} shards) vs k6, constant-arrival-rate ${rate}/s for ${duration}, ${targetName} target, delay ${delayMs} ms\n`,
        );
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
          await new Promise((r) => setTimeout(r, 3000));
        };
        await baselineRun();
        const edge = await withTargetCpu(() => edgeloadRun(stack, targetUrl, path, rate, duration, shards));
        await new Promise((r) => setTimeout(r, 3000)); // cool-down between the two
        const k6Result = await withTargetCpu(() => runK6(k6, targetUrl + path, rate, duration));
        await new Promise((r) => setTimeout(r, 3000));
        const floor = await withTargetCpu(() => fetchFloor(targetUrl + path, Math.min(edge.requests, 10_000)));
        await new Promise((r) => setTimeout(r, 3000));
        const paced = await withTargetCpu(() => fetchFloor(targetUrl + path, Math.min(edge.requests, 10_000), rate));
        await new Promise((r) => setTimeout(r, 3000));
        const pacedInObject = await withTargetCpu(() => fetchFloor(targetUrl + path, Math.min(edge.requests, 10_000), rate, true));
        if (baseline) {
          await new Promise((r) => setTimeout(r, 3000));
          const again = await edgeloadRun(stack, targetUrl, path, rate, duration, shards);
          await new Promise((r) => setTimeout(r, 3000));
          await baselineRun();
          beforeAfter.push({ target: targetName, rate, now: [edge, again], base });
        }
        console.log(
          plainTable([
            ["", "requests", "achieved/s", ...LATENCY_COLUMNS, "CPU s", "CPU s per 1k req", "target CPU s per 1k req"],
            row(edge),
            row(k6Result),
            row(floor),
            row(paced),
            row(pacedInObject),
            [
              "edgeload/k6",
              (edge.requests / k6Result.requests).toFixed(3),
              (edge.achievedPerS / k6Result.achievedPerS).toFixed(3),
              "",
              `${(edge.p50Ms - k6Result.p50Ms).toFixed(2)} diff`,
              `${(edge.p95Ms - k6Result.p95Ms).toFixed(2)} diff`,
              `${(edge.p99Ms - k6Result.p99Ms).toFixed(2)} diff`,
              "",
              "",
              "",
              (perK(edge) / perK(k6Result)).toFixed(2),
              edge.targetCpuS !== undefined && k6Result.targetCpuS
                ? (edge.targetCpuS / edge.requests / (k6Result.targetCpuS / k6Result.requests)).toFixed(2)
                : "",
            ],
            ["edgeload/floor", "", "", "", "", "", "", "", "", "", (perK(edge) / perK(floor)).toFixed(2), ""],
            ["edgeload/paced floor", "", "", "", "", "", "", "", "", "", (perK(edge) / perK(paced)).toFixed(2), ""],
            ["edgeload/paced floor in an object", "", "", "", "", "", "", "", "", "", (perK(edge) / perK(pacedInObject)).toFixed(2), ""],
          ]),
        );
        // The crosscheck's own verdict on the two runs, with its (unchanged) tolerances.
        let verdict = "-";
        if (edge.figures && k6Result.figures) {
          const check = crosscheck(edge.figures, k6Result.figures);
          const off = check.rows.filter((r) => r.step === null && r.verdict === "disagree");
          console.log(
            `\n  crosscheck: ${check.verdict}${off.length ? ` (${off.map((r) => `${r.metric} ${r.edge} vs ${r.k6}, tolerance ${r.tolerance?.toFixed(2)}`).join("; ")})` : ""}`,
          );
          // Whose each residual is: the paced loop in an object is the runtime's own reading.
          const attributed = pacedInObject.floorLatency ? attributeResiduals(check, pacedInObject.floorLatency) : [];
          for (const line of renderAttributions(attributed)) console.log(`    ${line}`);
          const owner = (metric: string) => (attributed.find((a) => a.metric === metric)?.owner === "runtime" ? ", the runtime's" : "");
          verdict = off.length
            ? `${check.verdict} (${off.map((r) => `${r.metric} ${signedMs(Number(r.edge) - Number(r.k6))} ms${owner(r.metric)}`).join("; ")})`
            : check.verdict;
        }
        const bar = formatFloorBar(checkAgainstFloor(edge, pacedInObject));
        console.log(`  against the paced floor in an object: ${bar}`);
        atRates.push({ target: targetName, rate, clients: [edge, k6Result, paced, pacedInObject, { ...floor, name: "closed floor" }], verdict, bar });
      }
    // Every rate in one table, as the README shows it.
    console.log(`\n## Generator at every rate: edgeload / k6 / the workerd floors\n`);
    const ms = (r: GeneratorResult, cpu: number | undefined) => (cpu === undefined ? "" : ((cpu / r.requests) * 1000).toFixed(2));
    console.log(
      markdownTable(
        ["target", "rate", "", ...LATENCY_COLUMNS, "CPU ms per request", "target CPU ms per request", "crosscheck", "tail bar (vs paced floor in an object)"],
        atRates.flatMap(({ target, rate, clients, verdict, bar }) =>
          clients.map((r, i) => {
            const closed = r.name === "closed floor";
            return [
              i === 0 ? target : "",
              i === 0 ? `${rate}/s` : "",
              r.name === "paced fetch floor" ? "paced floor" : r.name,
              closed ? "" : String(r.dropped),
              closed ? "" : fmt(r.p50Ms),
              closed ? "" : fmt(r.p95Ms),
              closed ? "" : fmt(r.p99Ms),
              closed ? "" : formatSpread(r.p95BySecond && steadySpread(r.p95BySecond)),
              r.clientDelayMs ? `${fmt(r.clientDelayMs.p95)} / ${fmt(r.clientDelayMs.p99)}` : "",
              ms(r, r.cpuS),
              ms(r, r.targetCpuS),
              i === 0 ? verdict : "",
              i === 0 ? bar : "",
            ];
          }),
        ),
        new Set([0, 1, 2, 11, 12]),
      ),
    );
    console.log(`\n  generator CPU: edgeload = its workerd process (every shard and the coordinator), k6 = the k6 process,
  floor = a bare fetch loop's workerd process (closed, 25 at a time; paced: the same rate, one timer a send;
  paced in an object: the paced loop inside one Durable Object, where edgeload's shards send from);
  the target's CPU is not counted. Diffs are edgeload − k6 in ms.
  client delay: how long edgeload's own event loop held responses before timing them (an estimate
  that errs low, core/metrics/loop-delay.ts); it is part of edgeload's latencies, so edgeload − k6 beyond it
  is the clients' other differences.
  p95 by second: second 0's p95, then the smallest, median and largest p95 of the steady seconds (all but
  the first and the last), from the run's own per-second histograms (edgeload), k6's JSON lines, and the
  floors' timings by due second.
  tail bar: edgeload's slowest steady second within ${FLOOR_BAR.secondP95OverMs} ms of the paced floor in an object's slowest, and its
  p99 within ${FLOOR_BAR.p99OverMs} ms of the floor's (docs/accuracy.md); the client delay is the most edgeload's event loop held a
  response in that second, so a slow second with a large one was a stall of the whole thread.`);
    if (baseline) printBeforeAfter(baseline.label, beforeAfter, perK);
  } finally {
    await Promise.all([stack.stop(), baseline?.stack.stop(), native?.stop()]);
  }
}

/** This tree against the baseline revision: each side's two runs, and the ratio of their means. */
function printBeforeAfter(
  label: string,
  rows: ReadonlyArray<{ target: GeneratorTarget; rate: number; now: readonly GeneratorResult[]; base: readonly GeneratorResult[] }>,
  perK: (r: GeneratorResult) => number,
): void {
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const list = (xs: readonly number[]) => xs.map((x) => x.toFixed(3)).join(" / ");
  console.log(`\n## Generator before/after: edgeload ${label} vs this tree (runs in the order baseline, this tree, this tree, baseline)\n`);
  console.log(
    markdownTable(
      ["target", "rate", `CPU ms per request, ${label}`, "CPU ms per request, this tree", "this tree / baseline", `p95 ms, ${label}`, "p95 ms, this tree"],
      rows.map(({ target, rate, now, base }) => [
        target,
        `${rate}/s`,
        list(base.map(perK)),
        list(now.map(perK)),
        (mean(now.map(perK)) / mean(base.map(perK))).toFixed(3),
        base.map((r) => r.p95Ms.toFixed(1)).join(" / "),
        now.map((r) => r.p95Ms.toFixed(1)).join(" / "),
      ]),
      new Set([0, 1]),
    ),
  );
}
