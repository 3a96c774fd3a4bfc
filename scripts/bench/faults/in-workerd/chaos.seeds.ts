/**
 * The in-workerd half of `npm run bench -- chaos` (scripts/bench/chaos/run-chaos.ts): one
 * test per schedule it was given (the CHAOS_SCHEDULES binding, JSON), each playing its
 * schedule over a run (./chaos-run.ts) and recording what it observed in
 * `task.meta.chaos`. It fails only when a run cannot be observed at all: the invariants
 * are judged by the bench (scripts/bench/chaos/invariants.ts).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, it } from "vitest";
import type { ChaosObservation } from "../../chaos/invariants.ts";
import type { ChaosSchedule } from "../../chaos/schedule.ts";
import { playSchedule, uploadChaosSeed } from "./chaos-run.ts";

const schedules = JSON.parse((env as unknown as { CHAOS_SCHEDULES?: string }).CHAOS_SCHEDULES ?? "[]") as ChaosSchedule[];

describe("chaos schedules inside workerd", () => {
  beforeAll(uploadChaosSeed);
  for (const [n, schedule] of schedules.entries()) {
    it(`${schedule.shape} seed ${schedule.seed} (${schedule.faults.length} faults) #${n}`, async ({ task }) => {
      const startedAt = Date.now();
      task.meta.chaos = await playSchedule(schedule);
      console.error(`chaos: ${schedule.shape} seed ${schedule.seed}: ${task.meta.chaos.status} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
    });
  }
});

declare module "vitest" {
  interface TaskMeta {
    chaos?: ChaosObservation;
  }
}
