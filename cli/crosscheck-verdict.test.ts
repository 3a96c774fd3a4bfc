import { describe, expect, it } from "vitest";
import type { K6ImportView } from "../core/formats/k6-summary.ts";
import { crosscheck, type LoadFigures } from "../core/results/crosscheck.ts";
import { importsVerdict, importVerdict } from "./crosscheck-command.ts";

const figures: LoadFigures = {
  requests: 1500,
  ratePerS: 300,
  errorRate: 0,
  failed: 0,
  durationS: 5,
  dropped: 0,
  steps: {},
  latency: { p50: 22, p90: 24, p95: 26, p99: 30, max: 40 },
};
const view = (comparison: K6ImportView["comparison"], problems?: K6ImportView["problems"]): K6ImportView => ({
  id: "k-1",
  runId: "r-1",
  format: "summary-export",
  importedAt: "2026-11-28T00:00:00.000Z",
  comparison,
  ...(problems ? { problems } : {}),
});

describe("crosscheck's exit verdict over stored imports", () => {
  it("is inconclusive, never a pass, for an import the parser no longer reads", () => {
    const v = importVerdict(view(null, [{ field: "metrics", detail: "missing" }]));
    expect(v).toEqual({ kind: "inconclusive", reasons: ["k6 import k-1 cannot be compared: metrics: missing"] });
  });

  it("is inconclusive when the run has no imports at all", () => {
    expect(importsVerdict("r-1", [])).toEqual({ kind: "inconclusive", reasons: ["no k6 summaries imported for run r-1"] });
  });

  it("passes only when every import agrees; one that disagrees fails", () => {
    const agree = view(crosscheck(figures, figures));
    const disagree = view(crosscheck(figures, { ...figures, requests: 900, ratePerS: 180 }));
    expect(importsVerdict("r-1", [agree]).kind).toBe("passed");
    expect(importsVerdict("r-1", [agree, view(null, [])]).kind).toBe("inconclusive");
    expect(importsVerdict("r-1", [agree, disagree]).kind).toBe("failed");
  });
});
