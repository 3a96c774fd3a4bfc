import protobuf from "protobufjs";
import { uncompress } from "snappyjs";
import { describe, expect, it } from "vitest";
import { remoteWriteBody } from "./remote-write.ts";

/** prometheus/prompb's messages, decoded by protobufjs' reflection (independent of our Writer use). */
const PROMPB = protobuf
  .parse(`
  syntax = "proto3";
  package prometheus;
  message WriteRequest { repeated TimeSeries timeseries = 1; }
  message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
  message Label { string name = 1; string value = 2; }
  message Sample { double value = 1; int64 timestamp = 2; }
`)
  .root.lookupType("prometheus.WriteRequest");

describe("remoteWriteBody", () => {
  it("is a snappy-compressed WriteRequest with __name__ first and labels sorted", () => {
    const body = remoteWriteBody(
      [
        { name: "edgeload_http_reqs_total", labels: { status: "200", region: "weur", run_id: "r-x" }, value: 160 },
        { name: "edgeload_http_req_duration_seconds_bucket", labels: { le: "+Inf" }, value: 0.5, timestampMs: 42 },
      ],
      1_764_000_000_123,
    );
    const decoded = PROMPB.toObject(PROMPB.decode(uncompress(body)), { longs: Number }) as {
      timeseries: Array<{ labels: Array<{ name: string; value: string }>; samples: Array<{ value: number; timestamp: number }> }>;
    };
    expect(decoded.timeseries).toEqual([
      {
        labels: [
          { name: "__name__", value: "edgeload_http_reqs_total" },
          { name: "region", value: "weur" },
          { name: "run_id", value: "r-x" },
          { name: "status", value: "200" },
        ],
        samples: [{ value: 160, timestamp: 1_764_000_000_123 }],
      },
      {
        labels: [
          { name: "__name__", value: "edgeload_http_req_duration_seconds_bucket" },
          { name: "le", value: "+Inf" },
        ],
        samples: [{ value: 0.5, timestamp: 42 }],
      },
    ]);
  });
});
