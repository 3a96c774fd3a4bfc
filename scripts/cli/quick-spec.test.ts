import { describe, expect, it } from "vitest";
import { parseRunSpec } from "../../core/run-spec.ts";
import { demoSpec, quickSpec } from "./quick-spec.ts";

describe("quickSpec", () => {
  it("turns vegeta-like flags into a valid constant-arrival-rate spec", () => {
    const spec = quickSpec({ target: "http://127.0.0.1:9090/delay?ms=20", rate: 1000, duration: "15s", shards: 4, regions: "wnam,enam", headers: ["X-A: 1"], thresholds: ["http_req_duration=p(95)<300"] });
    const parsed = parseRunSpec(spec);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.spec).toMatchObject({ target: "http://127.0.0.1:9090", shards: 4, regions: ["wnam", "enam"], peakRatePerS: 1000 });
      expect(parsed.spec.steps[0]).toMatchObject({ path: "/delay?ms=20", headers: { "X-A": "1" } });
      expect(parsed.spec.thresholds).toEqual({ http_req_duration: ["p(95)<300"] });
    }
  });

  it.each([
    [{ target: "127.0.0.1:9090" }, /not an absolute URL/],
    [{ headers: ["no-colon"] }, /Name: value/],
    [{ thresholds: ["p(95)<300"] }, /http_req_duration=p\(95\)<300/],
  ])("explains bad flags: %j", (change, message) => {
    expect(() => quickSpec({ target: "http://127.0.0.1:1/", rate: 1, duration: "1s", ...change })).toThrow(message);
  });

  it("builds a demo spec that validates: 200/s, 4 shards in 4 regions", () => {
    const parsed = parseRunSpec(demoSpec("http://127.0.0.1:9090"));
    expect(parsed.ok && [parsed.spec.peakRatePerS, parsed.spec.shards, parsed.spec.regions]).toEqual([200, 4, ["wnam", "enam", "weur", "apac"]]);
  });
});
