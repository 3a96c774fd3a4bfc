/**
 * `edgeload plan` as text: the shards per region and the capacity model behind them, how
 * they report (the aggregation tree, or straight to the coordinator), what the run uses of
 * the platform against each limit level by level, and its cost line by line beside the same
 * load on k6 Cloud, and beside it the cost at the latencies its target may really have.
 */
import { gracefulStopOf } from "../schedule/graceful-stop.ts";
import { MAX_FAN_IN, type AggregationTree } from "./aggregation-tree.ts";
import type { Plan } from "./plan.ts";
import type { Preflight } from "./preflight.ts";
import type { LimitLevel } from "./limit-checks.ts";
import { formatUsd } from "./run-cost.ts";
import type { RunUsage } from "./run-usage.ts";
import { PRICES } from "./cloudflare-pricing.ts";
import type { LatencyCost } from "./latency-costs.ts";
import type { RunSpec } from "../spec/types.ts";
import { table } from "../run/text-format.ts";
import type { BrowserPlan } from "./browser-sessions.ts";
import { BROWSER_RUN_LIMITS } from "./platform-limits.ts";
import { WARM_UP_LEAD_MS } from "../schedule/shard-assignment.ts";

const LEVEL_HEADINGS: Readonly<Record<LimitLevel, string>> = {
  shard: "the shards",
  aggregator: "the aggregators",
  coordinator: "the coordinator",
  D1: "D1",
  R2: "R2",
  "Browser Run": "Browser Run (the account's, shared with anything else of it)",
};

const count = (n: number) => Math.round(n).toLocaleString("en-US");
/** A line's quantity: whole units, or two significant digits of a fraction (GB-months of storage). */
const quantity = (n: number) => (n > 0 && n < 10 && !Number.isInteger(n) ? n.toPrecision(2) : count(n));
const warmUpOrigin = (target: string) => (URL.canParse(target) ? `${new URL(target).origin}/` : "the target's origin");

/** `fanIn`: the deployment's AGGREGATOR_FAN_IN, named when the run is flat. */
export function renderPreflight(spec: RunSpec, plan: Plan, p: Preflight, fanIn: number = MAX_FAN_IN): string {
  const perRegion = new Map<string, number>();
  for (const s of plan.shards) perRegion.set(s.region, (perRegion.get(s.region) ?? 0) + 1);
  const u = p.usage;
  const c = p.cost;
  const rate = plan.closedModel
    ? `${plan.closedModel.peakVUs} VUs (closed model, ~${count(u.requests)} requests estimated)`
    : `peak ${count(spec.peakRatePerS)}/s, ${count(u.requests)} requests`;
  return [
    // The run may end up to its graceful stop after the schedule (iterations in progress finish).
    `plan: ${spec.name} — ${spec.executor}, ${u.durationS} s (+ up to ${gracefulStopOf(spec) / 1000} s gracefulStop), ${rate}`,
    `shards: ${count(plan.shards.length)} (${[...perRegion].map(([r, n]) => `${r} ${count(n)}`).join(", ")}); ${plan.capacityPerShardPerS}/s each at ${spec.expectedLatencyMs} ms with ${spec.connectionSlots} slots, asked for ${plan.peakPerShardPerS}/s`,
    reportingLine(plan, spec.steps.length, fanIn),
    `invocations: ${count(u.shardInvocations)} shard alarms (each sends at most ${count(plan.iterationsPerInvocation)} ${plan.closedModel ? "requests" : "iterations"}, then hands over)`,
    `warm-up: each shard wakes ${WARM_UP_LEAD_MS / 1000} s before t0, builds its flow${spec.scenario?.seed || spec.data ? " and reads its seed set" : ""} and opens its connection with one HEAD of ${warmUpOrigin(spec.target)} (counted in no metric)`,
    ...(p.browsers ? [browsersLine(p.browsers)] : []),
    "",
    "platform limits",
    ...table(
      ["limit", "this run", "max", ""],
      // Level by level: a heading row where the level changes, its limits indented under it.
      p.limits.flatMap((l, i) => [
        ...(l.level === p.limits[i - 1]?.level ? [] : [[LEVEL_HEADINGS[l.level], "", "", ""]]),
        [`  ${l.limit}`, count(l.value), count(l.max), l.ok ? "ok" : "OVER"],
      ]),
    ),
    ...p.limits.filter((l) => !l.ok).map((l) => `  over: ${l.limit}: ${l.note}`),
    "",
    `estimated cost (Cloudflare list prices of ${c.pricingDate}, beyond the plan's included usage)`,
    ...table(
      ["", "quantity", "cost"],
      [
        ...c.lines.map((l) => [l.item, `${quantity(l.quantity)} ${l.unit}`, formatUsd(l.usd)]),
        ["total", "", formatUsd(c.totalUsd)],
        ["per million requests", "", formatUsd(c.usdPerMillionRequests)],
      ],
    ),
    `  k6 Cloud for the same run: ${count(c.k6Cloud.vus)} VUs × ${Math.ceil(u.durationS / 60)} min = ${c.k6Cloud.vuh.toFixed(1)} VUh → ${formatUsd(c.k6Cloud.usd)} (${formatUsd(c.k6Cloud.usdPerMillionRequests)} per million requests)`,
    `    VUs from ${c.k6Cloud.vusBasis}`,
    afterRetentionLine(u.storage),
    ...(spec.maxCostUsd != null ? [`  budget (maxCost): ${formatUsd(spec.maxCostUsd)} — ${p.overBudget ? "OVER: the API refuses this run" : "within"}`] : []),
    ...(plan.notes.length ? ["", "notes", ...plan.notes.map((n) => `  - ${n}`)] : []),
  ].join("\n");
}

/** The Browser Run sessions of the run's browser scenarios: how many, how full, how their starts are spread. */
function browsersLine(b: BrowserPlan): string {
  const lastStartS = Math.max(0, ...b.sessions.map((s) => s.startsAtMs)) / 1000;
  return `browsers: ${count(b.sessions.length)} Browser Run sessions (one per shard of a browser scenario, up to ${count(b.mostVusPerBrowser)} VUs' contexts each), started at least ${1000 / BROWSER_RUN_LIMITS.newBrowsersPerS} ms apart (the last at ${lastStartS} s), ${b.browserHours.toFixed(2)} browser-hours, ${count(b.peakConcurrent)} at once at the peak`;
}

/** What D1 keeps of the run once its retention is over, and what that costs a month from then on (not in the total). */
function afterRetentionLine(storage: RunUsage["storage"]): string {
  const mb = storage.d1BytesAfterRetention / 1e6;
  const usdPerMonth = (storage.d1BytesAfterRetention / 1e9) * PRICES.d1StorageGbMonth;
  return `  after the ${storage.retentionDays} days D1 keeps ${mb.toFixed(mb < 10 ? 2 : 0)} MB of it (minute rows, shard counters, the run's row): ${formatUsd(usdPerMonth)} a month from then, not in the total`;
}

/**
 * How the shards report, e.g. "tree: 7,146 shards → 72 aggregators (≤ 100 children each) →
 * 6 region roots → coordinator; 2 levels, the coordinator merges 6 regions × 1 step a second".
 */
export function reportingLine(plan: Plan, steps: number, fanIn: number = MAX_FAN_IN): string {
  const tree = plan.tree;
  const shards = plan.shards.length;
  if (!tree) {
    return shards <= fanIn
      ? `reporting: every shard to the coordinator (≤ ${count(fanIn)} shards: no aggregator)`
      : `reporting: every shard to the coordinator (${count(shards)} shards; no aggregation tree planned)`;
  }
  const regions = tree.roots.length;
  const rootsOnTop = tree.roots.every((r) => tree.aggregators[r]!.level === tree.depth);
  const hops = [`${count(shards)} shards`, ...levels(tree, rootsOnTop), rootsOnTop ? "coordinator" : `coordinator (from ${regions} region roots)`];
  return `tree: ${hops.join(" → ")}; ${tree.depth} level${tree.depth === 1 ? "" : "s"}, the coordinator merges ${regions} region${regions === 1 ? "" : "s"} × ${steps} step${steps === 1 ? "" : "s"} a second`;
}

/** One hop per level of aggregators; the top one named as the region roots when every root is on it. */
function levels(tree: AggregationTree, rootsOnTop: boolean): string[] {
  return Array.from({ length: tree.depth }, (_, i) => {
    const level = i + 1;
    const n = tree.aggregators.filter((a) => a.level === level).length;
    const name = level === tree.depth && rootsOnTop ? `region root${n === 1 ? "" : "s"}` : `aggregator${n === 1 ? "" : "s"}`;
    return `${count(n)} ${name}${level === 1 ? ` (≤ ${count(tree.fanIn)} children each)` : ""}`;
  });
}

/**
 * The run's cost at each latency of `costs` (latency-costs.ts), the one it was planned at
 * marked: where the plan above sits among the latencies its target may really have.
 * `basis` says where the planned latency came from (the spec's expectedLatency, a probe).
 */
export function renderLatencyCosts(costs: readonly LatencyCost[], plannedMs: number, basis: string): string {
  return [
    `cost by the target's time to first byte (the plan above is at ${plannedMs} ms: ${basis})`,
    ...table(
      ["latency", "shards", "requests priced", "cost", "per million requests"],
      costs.map((c) => [
        `${c.latencyMs === plannedMs ? "→ " : "  "}${c.latencyMs} ms`,
        c.problem ? "-" : count(c.shards),
        c.problem ? "-" : count(c.requests),
        c.problem ? "-" : formatUsd(c.totalUsd),
        c.problem ? "-" : formatUsd(c.usdPerMillionRequests),
      ]),
    ),
    ...costs.flatMap((c) =>
      c.problem
        ? [`  at ${c.latencyMs} ms: not planned: ${c.problem}`]
        : c.limitsBroken.length
          ? [`  at ${c.latencyMs} ms the run breaks: ${c.limitsBroken.join(", ")}`]
          : [],
    ),
  ].join("\n");
}
