/**
 * The in-workerd half of `npm run bench -- chaos` (not part of `npm test`: a seed is a run
 * of seconds). The coordinator Worker as in the fault table (../faults/vitest.config.ts),
 * with an aggregator fan-in of 2 so a run of six shards reports through a tree, the
 * coordinator's tick-failure budget of the chaos run (./schedule.ts CHAOS_RUN), and the
 * schedules to play passed in by ./run-chaos.ts (CHAOS_SCHEDULES, JSON).
 */
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { buildDashboardAssets } from "../../build/dashboard-assets.mjs";
import { coordinatorTestBindings } from "../../../test/workers/bindings.ts";
import { CHAOS_RUN } from "./schedule.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
process.env.WRANGLER_SEND_METRICS ??= "false";
// wrangler.toml serves the dashboard's assets: they must exist before the config is read.
buildDashboardAssets();

export default defineConfig({
  root,
  plugins: [
    cloudflareTest(async ({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: await coordinatorTestBindings(inject<string>("targetUrl"), {
          AGGREGATOR_FAN_IN: "2",
          RESULT_WRITE_RETRIES: String(CHAOS_RUN.resultWriteRetries),
          TARGET_ADMIN_SECRET: inject<string>("targetAdminSecret"),
          CHAOS_SCHEDULES: process.env.CHAOS_SCHEDULES ?? "[]",
        }),
      },
    })),
  ],
  test: {
    name: "chaos",
    include: ["scripts/bench/faults/in-workerd/chaos.seeds.ts"],
    globalSetup: ["scripts/bench/faults/global-setup.ts"],
    setupFiles: ["test/workers/apply-migrations.ts"],
    // A seed with D1 away for minutes waits for the run's deadline at most (t0 + 157 s).
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
