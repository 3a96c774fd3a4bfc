/**
 * 1. histogram: edgeload's histogram (core/metrics/histogram.ts) against hdr-histogram-js in pure JS
 *    mode, as Workers run it — record, serialise + parse, merge, size, memory, p99.
 *
 * Why: every shard records each latency into a histogram and ships one serialised window a
 * second, and the coordinator merges them; these are the operations a run pays for on the
 * data path, priced against the library most load tools use. The figures are ratios, taken
 * side by side in one process (the machines are shared and noisy).
 */
import * as hdr from "hdr-histogram-js";
import { Histogram } from "../../core/metrics/histogram.ts";
import { plainTable } from "./plain-table.ts";

/** The best of `repeat` runs of `fn`, in ms: the run least disturbed by the rest of the machine. */
function time(fn: () => void, repeat = 5): number {
  let best = Infinity;
  for (let i = 0; i < repeat; i++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** Latency-like values in µs: around 20 ms with a long tail. */
function samples(n: number, seed = 1): number[] {
  let x = seed;
  const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: n }, () => Math.round(20_000 * Math.exp(0.3 * Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand()))));
}

export function histogramBench(): void {
  console.log("\n## Histogram: edgeload (core/metrics/histogram.ts) vs hdr-histogram-js 3 (JS, 2 significant digits)\n");
  const newHdr = () => hdr.build({ numberOfSignificantValueDigits: 2, highestTrackableValue: 2 ** 32, bitBucketSize: 64, useWebAssembly: false });
  const values1M = samples(1_000_000);
  const window = samples(250, 7); // one shard's window at 250 requests/s

  const recordOwn = time(() => {
    const h = new Histogram();
    for (const v of values1M) h.record(v);
  });
  const recordHdr = time(() => {
    const h = newHdr();
    for (const v of values1M) h.recordValue(v);
  });

  const own = new Histogram();
  const theirs = newHdr();
  for (const v of window) {
    own.record(v);
    theirs.recordValue(v);
  }
  const ownText = JSON.stringify(own.snapshot());
  const hdrText = hdr.encodeIntoCompressedBase64(theirs);
  const roundTripOwn = time(() => {
    for (let i = 0; i < 1000; i++) Histogram.fromSnapshot(JSON.parse(JSON.stringify(own.snapshot())));
  }, 3);
  const roundTripHdr = time(() => {
    for (let i = 0; i < 1000; i++) hdr.decodeFromCompressedBase64(hdr.encodeIntoCompressedBase64(theirs), 64, false);
  }, 3);

  const ownParts = Array.from({ length: 64 }, (_, i) => {
    const h = new Histogram();
    for (const v of samples(250, i + 2)) h.record(v);
    return h;
  });
  const hdrParts = Array.from({ length: 64 }, (_, i) => {
    const h = newHdr();
    for (const v of samples(250, i + 2)) h.recordValue(v);
    return h;
  });
  const mergeOwn = time(() => {
    const total = new Histogram();
    for (const p of ownParts) total.merge(p);
  });
  const mergeHdr = time(() => {
    const total = newHdr();
    for (const p of hdrParts) total.add(p);
  });

  const p99own = own.quantile(0.99);
  const p99hdr = theirs.getValueAtPercentile(99);
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(
    plainTable([
      ["", "edgeload", "hdr-histogram-js", "edgeload/hdr"],
      ["record 1M values (ms)", recordOwn.toFixed(1), recordHdr.toFixed(1), ratio(recordOwn, recordHdr)],
      ["serialise + parse a 250-value window ×1000 (ms)", roundTripOwn.toFixed(1), roundTripHdr.toFixed(1), ratio(roundTripOwn, roundTripHdr)],
      ["serialised window size (bytes)", String(ownText.length), String(hdrText.length), ratio(ownText.length, hdrText.length)],
      ["merge 64 windows (ms)", mergeOwn.toFixed(2), mergeHdr.toFixed(2), ratio(mergeOwn, mergeHdr)],
      [
        "memory per histogram of the window (bytes)",
        String(own.footprintBytes),
        String(theirs.estimatedFootprintInBytes),
        ratio(own.footprintBytes, theirs.estimatedFootprintInBytes),
      ],
      ["p99 of the window (µs)", p99own.toFixed(0), String(p99hdr), ""],
    ]),
  );
}
