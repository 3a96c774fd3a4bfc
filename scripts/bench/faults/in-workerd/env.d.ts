// The bindings the fault rows see besides the coordinator's (see ../vitest.config.ts).
/// <reference types="@cloudflare/vitest-plugin/types" />
import type { RoutesEnv } from "../../../../coordinator/http/routes-env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends RoutesEnv {
      readonly TARGET_URL: string;
      readonly TARGET_ADMIN_SECRET: string;
      readonly TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}
