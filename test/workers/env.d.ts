// Types for the workers tests: the cloudflare:test module and the test bindings.
/// <reference types="@cloudflare/vitest-plugin/types" />
import type { RoutesEnv } from "../../coordinator/http/routes-env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends RoutesEnv {
      readonly TARGET_URL: string;
      /** test/workers/watch-server.ts: a slow-able target and a webhook receiver on loopback. */
      readonly WATCH_SERVER_URL: string;
      /** test/workers/verification-server.ts: a DNS-over-HTTPS stand-in and a loopback target. */
      readonly VERIFICATION_SERVER_URL: string;
      readonly TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}
