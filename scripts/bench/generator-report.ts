/**
 * What the generator bench (generator-bench.ts) prints: each round's table (edgeload, k6
 * and the three workerd floors at one rate on one target, with the ratios), the
 * crosscheck's verdict on the edgeload and k6 runs, the table of every rate as the README
 * shows it with its legend, and the before/after table against a baseline revision. The
 * runs are measured in generator-bench.ts and generator-clients.ts; nothing here runs any.
 */
import { crosscheck } from "../../core/results/crosscheck.ts";
import { attributeResiduals, renderAttributions, signedMs } from "../../core/results/crosscheck-attribution.ts";
import type { GeneratorResult } from "./generator-clients.ts";
import { markdownTable } from "./markdown-table.ts";
import { FLOOR_BAR, formatSpread, steadySpread } from "./per-second.ts";
import { plainTable } from "./plain-table.ts";

/** The columns both tables give each client, in this order: drops, then its latencies. */
const LATENCY_COLUMNS = ["dropped", "p50 ms", "p95 ms", "p99 ms", "p95 by second ms: 1st; steady min / median / max", "client delay p95 / p99 ms"];

/** The clients of one round, at one rate on one target. */
/** The targets the generator bench loads: workerd's own Worker, or the native Go one. */
export type GeneratorTarget = "workerd" | "native";
export const GENERATOR_TARGETS: readonly GeneratorTarget[] = ["workerd", "native"];

export interface Round {
  readonly edge: GeneratorResult;
  readonly k6: GeneratorResult;
  /** The closed fetch loop, the paced one, and the paced one inside a Durable Object. */
  readonly floor: GeneratorResult;
  readonly paced: GeneratorResult;
  readonly pacedInObject: GeneratorResult;
}

/** A round as the table of every rate shows it. */
export interface RateRow {
  readonly target: GeneratorTarget;
  readonly rate: number;
  readonly clients: GeneratorResult[];
  readonly verdict: string;
  readonly bar: string;
}

/** This tree's two edgeload runs of a round and the baseline revision's two. */
export interface BeforeAfterRow {
  readonly target: GeneratorTarget;
  readonly rate: number;
  readonly now: readonly GeneratorResult[];
  readonly base: readonly GeneratorResult[];
}

/** Generator CPU ms per 1,000 requests. */
export const perK = (r: GeneratorResult) => (r.cpuS / r.requests) * 1000;
const fmt = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(2));

/** One round's clients side by side, with edgeload over k6 and over each floor. */
export function roundTable({ edge, k6, floor, paced, pacedInObject }: Round): string {
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
  return plainTable([
    ["", "requests", "achieved/s", ...LATENCY_COLUMNS, "CPU s", "CPU s per 1k req", "target CPU s per 1k req"],
    row(edge),
    row(k6),
    row(floor),
    row(paced),
    row(pacedInObject),
    [
      "edgeload/k6",
      (edge.requests / k6.requests).toFixed(3),
      (edge.achievedPerS / k6.achievedPerS).toFixed(3),
      "",
      `${(edge.p50Ms - k6.p50Ms).toFixed(2)} diff`,
      `${(edge.p95Ms - k6.p95Ms).toFixed(2)} diff`,
      `${(edge.p99Ms - k6.p99Ms).toFixed(2)} diff`,
      "",
      "",
      "",
      (perK(edge) / perK(k6)).toFixed(2),
      edge.targetCpuS !== undefined && k6.targetCpuS ? (edge.targetCpuS / edge.requests / (k6.targetCpuS / k6.requests)).toFixed(2) : "",
    ],
    ["edgeload/floor", "", "", "", "", "", "", "", "", "", (perK(edge) / perK(floor)).toFixed(2), ""],
    ["edgeload/paced floor", "", "", "", "", "", "", "", "", "", (perK(edge) / perK(paced)).toFixed(2), ""],
    ["edgeload/paced floor in an object", "", "", "", "", "", "", "", "", "", (perK(edge) / perK(pacedInObject)).toFixed(2), ""],
  ]);
}

/**
 * The crosscheck's own verdict on the edgeload and k6 runs, with its (unchanged)
 * tolerances: printed with whose each residual is, and returned for the table of every
 * rate ("-" when either run has no figures).
 */
export function crosscheckVerdict({ edge, k6, pacedInObject }: Round): string {
  if (!edge.figures || !k6.figures) return "-";
  const check = crosscheck(edge.figures, k6.figures);
  const off = check.rows.filter((r) => r.step === null && r.verdict === "disagree");
  console.log(
    `\n  crosscheck: ${check.verdict}${off.length ? ` (${off.map((r) => `${r.metric} ${r.edge} vs ${r.k6}, tolerance ${r.tolerance?.toFixed(2)}`).join("; ")})` : ""}`,
  );
  // Whose each residual is: the paced loop in an object is the runtime's own reading.
  const attributed = pacedInObject.floorLatency ? attributeResiduals(check, pacedInObject.floorLatency) : [];
  for (const line of renderAttributions(attributed)) console.log(`    ${line}`);
  const owner = (metric: string) => (attributed.find((a) => a.metric === metric)?.owner === "runtime" ? ", the runtime's" : "");
  return off.length
    ? `${check.verdict} (${off.map((r) => `${r.metric} ${signedMs(Number(r.edge) - Number(r.k6))} ms${owner(r.metric)}`).join("; ")})`
    : check.verdict;
}

/** Every rate in one table, as the README shows it. */
export function everyRateTable(atRates: readonly RateRow[]): string {
  const ms = (r: GeneratorResult, cpu: number | undefined) => (cpu === undefined ? "" : ((cpu / r.requests) * 1000).toFixed(2));
  return markdownTable(
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
  );
}

/** What the table of every rate's columns mean, printed below it. */
export const EVERY_RATE_LEGEND = `
  generator CPU: edgeload = its workerd process (every shard and the coordinator), k6 = the k6 process,
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
  response in that second, so a slow second with a large one was a stall of the whole thread.`;

/** This tree against the baseline revision: each side's two runs, and the ratio of their means. */
export function printBeforeAfter(label: string, rows: readonly BeforeAfterRow[]): void {
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
