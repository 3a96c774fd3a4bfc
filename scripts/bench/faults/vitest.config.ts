/**
 * The in-workerd half of `npm run bench -- faults` (not part of `npm test`: it runs
 * minutes). The coordinator Worker with its Durable Objects, D1 and R2 runs in workerd as
 * in the workers tests, where faults can be injected into the objects themselves
 * (restarts, duplicate alarms, replayed flushes, a results database that refuses writes).
 */
import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("../../..", import.meta.url));
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
process.env.WRANGLER_SEND_METRICS ??= "false";

export default defineConfig({
  root,
  plugins: [
    cloudflareTest(async ({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          EDGELOAD_API_TOKEN: "test-token",
          EDGELOAD_MODE: "local",
          MAX_SHARDS: "16",
          // Invocations of 100 requests, so shards hand over (and can be hit in between).
          SUBREQUESTS_PER_INVOCATION: "600",
          // A short retry budget (retries 1, 2, 4, 8 and 16 s apart: about 30 s) so the row
          // that exceeds it takes seconds, not the default's four minutes.
          RESULT_WRITE_RETRIES: "6",
          TARGET_URL: inject<string>("targetUrl"),
          TARGET_ADMIN_SECRET: inject<string>("targetAdminSecret"),
          TEST_MIGRATIONS: await readD1Migrations("./coordinator/migrations"),
        },
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
  },
});
