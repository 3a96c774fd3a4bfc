/**
 * The coordinator's bindings in workerd for the workers tests and the in-workerd fault
 * benchmark (scripts/bench/faults): one token, local mode, small invocations, the real
 * target's URL and the D1 migrations. Runs in Node, from the vitest configs.
 */
import { readD1Migrations } from "@cloudflare/vitest-plugin";

export async function coordinatorTestBindings(targetUrl: string, extra: Record<string, string> = {}) {
  return {
    EDGELOAD_API_TOKEN: "test-token-of-at-least-32-characters",
    EDGELOAD_MODE: "local",
    MAX_SHARDS: "16",
    // Small invocations (100 requests each) so shards hand over and can be evicted, or hit, in between.
    SUBREQUESTS_PER_INVOCATION: "600",
    TARGET_URL: targetUrl,
    TEST_MIGRATIONS: await readD1Migrations("./coordinator/migrations"),
    ...extra,
  };
}
