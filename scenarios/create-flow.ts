/** The flow a shard runs for a spec: its built-in scenario, or its own steps (with their seed records, if any). */
import type { RunSpec } from "../core/spec/types.ts";
import { seedRecords } from "../core/data/seed-records.ts";
import type { SeedData } from "../core/data/seed-set.ts";
import { SCENARIOS } from "./catalog.ts";
import { customStepsFlow } from "./custom-steps.ts";
import type { Flow } from "./flow.ts";

export function createFlow(spec: RunSpec, data: SeedData | null, shard: { index: number; count: number }): Flow {
  if (!spec.scenario) return customStepsFlow(spec, data ? { records: seedRecords(data), shard } : null);
  const definition = SCENARIOS[spec.scenario.name];
  if (!definition) throw new Error(`unknown scenario ${spec.scenario.name}`);
  return definition.create({ target: spec.target, options: spec.scenario.options, data, shardIndex: shard.index, shardCount: shard.count });
}
