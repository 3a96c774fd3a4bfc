// Types for the workers tests: the cloudflare:test module and the test bindings.
/// <reference types="@cloudflare/vitest-plugin/types" />
import type { Env as CoordinatorEnv } from "../../coordinator/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends CoordinatorEnv {
      readonly TARGET_URL: string;
      readonly TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}
