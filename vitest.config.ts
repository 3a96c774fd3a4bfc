/**
 * Five test projects, all run by `npm test`:
 *  - unit:    pure modules and Node code (core/, cli/, scripts/, …) in plain Node
 *  - workers: Durable Objects, D1 and routes inside workerd (@cloudflare/vitest-plugin),
 *             against the real target Worker started by test/workers/global-setup.ts
 *  - workers-tree: the same with an aggregator fan-in of 2, so runs report through a tree
 *  - target:  the Authrim-style target Worker against its contract, inside workerd
 *  - e2e:     the local stack started exactly as the CLI starts it, driven over HTTP
 */
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
// The Worker's static assets must hold uPlot before any project reads wrangler.toml.
import { buildDashboardAssets } from "./scripts/build/dashboard-assets.mjs";
import { coordinatorTestBindings } from "./test/workers/bindings.ts";
import { useLocalChromium } from "./cli/local-chromium.ts";

buildDashboardAssets();

process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
process.env.WRANGLER_SEND_METRICS ??= "false";
// The browser binding's local sessions run Debian's Chromium, not a download (cli/local-chromium.ts).
useLocalChromium();

/**
 * What every project run inside workerd shares. Vitest's module cache on disk is off: with it,
 * a fresh test file's runner asks for the whole import graph it can find already transformed
 * ("fetchWarmModules"), the Cloudflare pool inlines every cached module into that one answer,
 * and once earlier files have transformed the coordinator's graph the answer passes workerd's
 * 1 MiB WebSocket message limit: workerd ends the pool ("1009 Message is too large") and every
 * file still running with it. Modules are then fetched one by one, each well under the limit.
 */
const IN_WORKERD = { fsModuleCache: false } as const;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "core/**/*.test.ts",
            "coordinator/**/*.test.ts",
            "k6-compat/**/*.test.ts",
            "scenarios/**/*.test.ts",
            "cli/**/*.test.ts",
            "scripts/**/*.test.ts",
            "seeds/**/*.test.ts",
            "workers/shard/**/*.test.ts",
            "workers/outbound/**/*.test.ts",
            "reports/**/*.test.ts",
            "cloudflare/**/*.test.ts",
          ],
          environment: "node",
        },
      },
      {
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: await coordinatorTestBindings(inject<string>("targetUrl"), {
                EDGELOAD_READ_TOKEN: "read-token-of-at-least-32-characters",
                MAX_RATE_PER_S: "5000",
                MAX_CONCURRENT_RUNS: "4",
                // The scheduled-runs test's loopback target and webhook receiver.
                WATCH_SERVER_URL: inject<string>("watchServerUrl"),
                // The target-ownership test's DNS-over-HTTPS stand-in and loopback target.
                VERIFICATION_SERVER_URL: inject<string>("verificationServerUrl"),
              }),
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          ...IN_WORKERD,
          globalSetup: ["test/workers/global-setup.ts", "test/workers/watch-server.ts", "test/workers/verification-server.ts"],
          setupFiles: ["test/workers/apply-migrations.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The same Worker with an aggregator fan-in of 2, so a run of a few shards reports
        // through an aggregation tree (core/plan/aggregation-tree.ts).
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: await coordinatorTestBindings(inject<string>("targetUrl"), {
                AGGREGATOR_FAN_IN: "2",
                TARGET_ADMIN_SECRET: inject<string>("targetAdminSecret"),
              }),
            },
          })),
        ],
        test: {
          name: "workers-tree",
          ...IN_WORKERD,
          include: ["test/workers-tree/**/*.test.ts"],
          globalSetup: ["scripts/bench/faults/global-setup.ts"],
          setupFiles: ["test/workers/apply-migrations.ts"],
          testTimeout: 90_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./workers/target/wrangler.toml" },
            miniflare: {
              bindings: {
                ADMIN_API_SECRET: "admin-test-secret",
                TEST_MIGRATIONS: await readD1Migrations("./workers/target/migrations"),
              },
            },
          })),
        ],
        test: {
          name: "target",
          ...IN_WORKERD,
          include: ["test/target/**/*.test.ts"],
          setupFiles: ["test/target/apply-migrations.ts"],
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
