import { describe, expect, it } from "vitest";
import { ENDED_RUN_GRACE_MS } from "../http/metrics-api.ts";
import { CLEAN_UP_AFTER_MS } from "./run-cleanup.ts";

describe("CLEAN_UP_AFTER_MS", () => {
  it("keeps a final run's coordinator as long as /metrics lists the run, whose figures come from its totals", () => {
    // Cleaned up earlier, an ended run would drop out of /metrics before its gauges went to 0.
    expect(CLEAN_UP_AFTER_MS).toBeGreaterThanOrEqual(ENDED_RUN_GRACE_MS);
  });
});
