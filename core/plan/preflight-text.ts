/**
 * `edgeload plan` as text: the shards per region and the capacity model behind them, what
 * the run uses of the platform against each limit, and its cost line by line beside the
 * same load on k6 Cloud.
 */
import type { Plan } from "./plan.ts";
import type { Preflight } from "./preflight.ts";
import { formatUsd } from "./run-cost.ts";
import type { RunSpec } from "../spec/types.ts";
import { table } from "../run/summary-text.ts";
import { WARM_UP_LEAD_MS } from "../schedule/shard-assignment.ts";

const count = (n: number) => Math.round(n).toLocaleString("en-US");
const warmUpOrigin = (target: string) => (URL.canParse(target) ? `${new URL(target).origin}/` : "the target's origin");

export function renderPreflight(spec: RunSpec, plan: Plan, p: Preflight): string {
  const perRegion = new Map<string, number>();
  for (const s of plan.shards) perRegion.set(s.region, (perRegion.get(s.region) ?? 0) + 1);
  const u = p.usage;
  const c = p.cost;
  const rate = plan.closedModel
    ? `${plan.closedModel.peakVUs} VUs (closed model, ~${count(u.requests)} requests estimated)`
    : `peak ${count(spec.peakRatePerS)}/s, ${count(u.requests)} requests`;
  return [
    `plan: ${spec.name} — ${spec.executor}, ${u.durationS} s, ${rate}`,
    `shards: ${plan.shards.length} (${[...perRegion].map(([r, n]) => `${r} ${n}`).join(", ")}); ${plan.capacityPerShardPerS}/s each at ${spec.expectedLatencyMs} ms with ${spec.connectionSlots} slots, asked for ${plan.peakPerShardPerS}/s`,
    `invocations: ${count(u.shardInvocations)} shard alarms (each sends at most ${count(plan.iterationsPerInvocation)} ${plan.closedModel ? "requests" : "iterations"}, then hands over)`,
    `warm-up: each shard wakes ${WARM_UP_LEAD_MS / 1000} s before t0, builds its flow${spec.scenario?.seed || spec.data ? " and reads its seed set" : ""} and opens its connection with one HEAD of ${warmUpOrigin(spec.target)} (counted in no metric)`,
    "",
    "platform limits",
    ...table(
      ["limit", "this run", "max", ""],
      p.limits.map((l) => [l.limit, count(l.value), count(l.max), l.ok ? "ok" : "OVER"]),
    ),
    ...p.limits.filter((l) => !l.ok).map((l) => `  over: ${l.limit}: ${l.note}`),
    "",
    `estimated cost (Cloudflare list prices of ${c.pricingDate}, beyond the plan's included usage)`,
    ...table(
      ["", "quantity", "cost"],
      [
        ...c.lines.map((l) => [l.item, `${count(l.quantity)} ${l.unit}`, formatUsd(l.usd)]),
        ["total", "", formatUsd(c.totalUsd)],
        ["per million requests", "", formatUsd(c.usdPerMillionRequests)],
      ],
    ),
    `  k6 Cloud for the same run: ${count(c.k6Cloud.vus)} VUs × ${Math.ceil(u.durationS / 60)} min = ${c.k6Cloud.vuh.toFixed(1)} VUh → ${formatUsd(c.k6Cloud.usd)} (${formatUsd(c.k6Cloud.usdPerMillionRequests)} per million requests)`,
    `    VUs from ${c.k6Cloud.vusBasis}`,
    ...(spec.maxCostUsd != null ? [`  budget (maxCost): ${formatUsd(spec.maxCostUsd)} — ${p.overBudget ? "OVER: the API refuses this run" : "within"}`] : []),
    ...(plan.notes.length ? ["", "notes", ...plan.notes.map((n) => `  - ${n}`)] : []),
  ].join("\n");
}
