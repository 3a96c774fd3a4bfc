/**
 * Prometheus remote-write 1.0 bodies: a `prometheus.WriteRequest` (protobuf), snappy
 * block-compressed — what k6's `experimental-prometheus-rw` output and Prometheus' own
 * remote_write send. The series are the ones GET /v1/runs/:id/metrics serves (the same
 * exposition, parsed back with core/formats/prometheus-text-parser.ts), stamped with the push time, so a run
 * looks the same in Prometheus whether scraped or pushed.
 *
 * Encoded with protobufjs' Writer (no code generation: workerd forbids `new Function`) and
 * compressed with snappyjs. The messages and field numbers, from prometheus/prompb:
 *
 *   WriteRequest { repeated TimeSeries timeseries = 1; }
 *   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label        { string name = 1; string value = 2; }
 *   Sample       { double value = 1; int64 timestamp = 2; }   // timestamp: epoch ms
 *
 * Labels are sorted by name with `__name__` first, as the protocol requires.
 */
import protobuf from "protobufjs/minimal.js";
import { compress } from "snappyjs";
import type { PromSample } from "./prometheus-text-parser.ts";

export const REMOTE_WRITE_HEADERS = {
  "content-type": "application/x-protobuf",
  "content-encoding": "snappy",
  "x-prometheus-remote-write-version": "0.1.0",
} as const;

const LENGTH_DELIMITED = 2;
const FIXED64 = 1;
const VARINT = 0;
const tag = (field: number, wireType: number) => (field << 3) | wireType;

/** The uncompressed WriteRequest for `samples`, all stamped `timestampMs`. */
export function writeRequest(samples: readonly PromSample[], timestampMs: number): Uint8Array {
  // The plain Uint8Array Writer, not Writer.create(): where Buffer exists (Node, workerd's
  // nodejs_compat) that returns the BufferWriter, whose Buffer calls workerd's polyfill rejects.
  const w = new protobuf.Writer();
  for (const sample of samples) {
    w.uint32(tag(1, LENGTH_DELIMITED)).fork(); // TimeSeries
    const labels: Array<[string, string]> = [["__name__", sample.name], ...Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))];
    for (const [name, value] of labels) {
      w.uint32(tag(1, LENGTH_DELIMITED)).fork(); // Label
      w.uint32(tag(1, LENGTH_DELIMITED)).string(name);
      w.uint32(tag(2, LENGTH_DELIMITED)).string(value);
      w.ldelim();
    }
    w.uint32(tag(2, LENGTH_DELIMITED)).fork(); // Sample
    w.uint32(tag(1, FIXED64)).double(sample.value);
    w.uint32(tag(2, VARINT)).int64(sample.timestampMs ?? timestampMs);
    w.ldelim();
    w.ldelim();
  }
  return w.finish();
}

/** The HTTP body: the WriteRequest, snappy block-compressed. */
export function remoteWriteBody(samples: readonly PromSample[], timestampMs: number): Uint8Array {
  return compress(writeRequest(samples, timestampMs));
}
