/**
 * The in-workerd half of `npm run bench -- faults` (not part of `npm test`: it runs
 * minutes). The coordinator Worker with its Durable Objects, D1 and R2 runs in workerd as
 * in the workers tests, where faults can be injected into the objects themselves
 * (restarts, duplicate alarms, replayed flushes, a results database that refuses writes).
 */
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { buildDashboardAssets } from "../../build/dashboard-assets.mjs";
import { coordinatorTestBindings } from "../../../test/workers/bindings.ts";

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
          // A short retry budget (retries 1, 2, 4, 8 and 16 s apart: about 30 s) so the row
          // that exceeds it takes seconds, not the default's four minutes.
          RESULT_WRITE_RETRIES: "6",
          // Runs of more than two shards report through an aggregation tree (the tree rows).
          AGGREGATOR_FAN_IN: "2",
          TARGET_ADMIN_SECRET: inject<string>("targetAdminSecret"),
        }),
      },
    })),
  ],
  test: {
    name: "faults",
    include: ["scripts/bench/faults/in-workerd/*.faults.ts"],
    globalSetup: ["scripts/bench/faults/global-setup.ts"],
    setupFiles: ["test/workers/apply-migrations.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    // One fault file at a time: rows time stops and flushes, which must not share the CPU with another file's rows.
    fileParallelism: false,
  },
});
