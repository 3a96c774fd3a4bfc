import { describe, expect, it } from "vitest";
import { parseRunSpec } from "./run-spec.ts";
import { redactSpec, REDACTED } from "./redact.ts";

const base = { target: "http://127.0.0.1:9090", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 10, duration: "5s" };

describe("spec outputs", () => {
  it("reads OTLP outputs with their headers, and redacts the header values", () => {
    const parsed = parseRunSpec({
      ...base,
      outputs: [{ type: "opentelemetry", url: "https://otlp.example/v1/metrics", headers: { "x-api-key": "k-123", authorization: "Bearer t" } }],
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(parsed.spec.outputs).toEqual([
      { type: "opentelemetry", url: "https://otlp.example/v1/metrics", headers: { "x-api-key": "k-123", authorization: "Bearer t" } },
    ]);
    const shown = redactSpec(parsed.spec);
    expect(shown.outputs![0]!.headers).toEqual({ "x-api-key": REDACTED, authorization: REDACTED });
    expect(JSON.stringify(shown)).not.toContain("k-123");
  });

  it("defaults to none", () => {
    const parsed = parseRunSpec(base);
    expect(parsed.ok && parsed.spec.outputs).toEqual([]);
  });

  it("names the offending field", () => {
    const parsed = parseRunSpec({
      ...base,
      outputs: [
        { type: "influxdb", url: "http://x" },
        { type: "opentelemetry", url: "ftp://x" },
      ],
    });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.map((p) => p.field).sort()).toEqual(["outputs.0.type", "outputs.1.url"]);
  });
});
