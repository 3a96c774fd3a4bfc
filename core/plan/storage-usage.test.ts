/**
 * What a run stores and for how long (issue 49): a histogram row's bytes follow what the real
 * Histogram stores of a log-normal target, D1 keeps the rows for the retention, the objects
 * hold theirs while the run lasts, and each is priced per GB-month.
 */
import { describe, expect, it } from "vitest";
import { Histogram } from "../metrics/histogram.ts";
import { PRICES } from "./cloudflare-pricing.ts";
import { estimateCost } from "./run-cost.ts";
import { estimateUsage } from "./run-usage.ts";
import { histogramRowBytes, SCREENSHOT_BYTES, shardRowBytes, storageUsage } from "./storage-usage.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { parseRunSpec } from "../spec/run-spec.ts";
import { DEFAULT_LIMITS, planRun } from "./plan.ts";

/** mulberry32: a seeded uniform draw in (0, 1), so the measured bytes are the same each run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296 || 1e-9;
  };
}

/**
 * Bytes of the six histogram rows one cell of `samples` requests stores, on average: a
 * log-normal target (median 50 ms, σ 0.5) as duration, waiting and corrected; exponential
 * schedule lag (mean 0.5 ms), slot wait (one request in ten, mean 2 ms) and client delay
 * (mean 0.1 ms) — µs, as recorded.
 */
function measuredRowBytes(samples: number): number {
  const random = seeded(samples);
  const gauss = () => Math.sqrt(-2 * Math.log(random())) * Math.cos(2 * Math.PI * random());
  const exp = (meanUs: number) => Math.round(-meanUs * Math.log(random()));
  const [latency, lag, slot, client] = [new Histogram(), new Histogram(), new Histogram(), new Histogram()];
  for (let i = 0; i < samples; i++) {
    latency.record(Math.round(50_000 * Math.exp(0.5 * gauss())));
    lag.record(exp(500));
    slot.record(random() < 0.9 ? 0 : exp(2_000));
    client.record(exp(100));
  }
  const bytes = (h: Histogram) => JSON.stringify(h.buckets()).length;
  return (3 * bytes(latency) + bytes(lag) + bytes(slot) + bytes(client)) / 6;
}

describe("histogramRowBytes", () => {
  it.each([
    // [samples in a row: a region's second of one step] — rps500 over 4 regions, 2,000/s over 3, 35,000/s over 6, 1,000,000/s over 6
    [125],
    [667],
    [5_833],
    [166_667],
  ])("%d samples: within 35 % of what the real Histogram stores of a log-normal target (its JSON buckets, and the row's key and index beside)", (samples) => {
    const estimate = histogramRowBytes(samples);
    const measured = measuredRowBytes(samples) + 140;
    expect(estimate / measured).toBeGreaterThan(0.65);
    expect(estimate / measured).toBeLessThan(1.35);
  });

  it("grows with the samples, slowly: buckets fill as the tails are reached", () => {
    expect(histogramRowBytes(1)).toBeLessThan(histogramRowBytes(100));
    expect(histogramRowBytes(100_000) / histogramRowBytes(10_000)).toBeLessThan(1.6);
  });
});

describe("storageUsage", () => {
  const shape = {
    durationS: 600,
    activeS: 605,
    requests: 18_900_000,
    regions: 6,
    steps: 1,
    d1RowsPerS: 42,
    shards: 252,
    aggregators: 6,
    windowsHeldPerShard: 4,
    runRowBytes: 30_000,
    specBytes: 800,
    reporters: 6,
    retentionDays: 90,
    screenshots: 0,
  };

  it("keeps the run's D1 rows for the retention: three months of 90 days, a third of that at 30", () => {
    const s = storageUsage(shape);
    expect(s.d1GbMonths).toBeCloseTo((s.d1Bytes / 1e9) * 3, 9);
    expect(storageUsage({ ...shape, retentionDays: 30 }).d1GbMonths).toBeCloseTo(s.d1GbMonths / 3, 9);
    // 600 s × 36 histogram rows of 5,833 samples are most of it.
    expect(s.d1BytesByTable.histograms / s.d1Bytes).toBeGreaterThan(0.9);
    expect(s.d1BytesByTable.histograms).toBe(600 * 36 * histogramRowBytes(18_900_000 / 600 / 6));
  });

  it("keeps a screenshot's 300 KB in R2 for the retention, none without", () => {
    expect(storageUsage(shape).r2GbMonths).toBe(0);
    const s = storageUsage({ ...shape, screenshots: 1_000 });
    expect(s.r2Bytes).toBe(1_000 * SCREENSHOT_BYTES);
    expect(s.r2GbMonths).toBeCloseTo(0.3 * 3, 9); // 0.3 GB for 90 days
  });

  it("keeps a run's minute rows, its shards' counters and its own row after the retention: a sixtieth of its window rows and more", () => {
    const s = storageUsage(shape);
    // Ten minutes: 10 × (6 minute rows + 36 histograms of a minute's 315,000 samples), 252 shard rows of 1.3 KB, the run's row.
    expect(s.d1BytesAfterRetention).toBe(10 * (6 * 208 + 36 * histogramRowBytes(315_000)) + 252 * 1_300 + s.d1BytesByTable.run);
    expect(s.d1BytesAfterRetention).toBeLessThan(s.d1Bytes / 20);
  });

  it("holds the objects' storage only while they are active", () => {
    const s = storageUsage(shape);
    expect(s.durableObjectGbMonths).toBeCloseTo((s.durableObjectBytes / 1e9) * (605 / (30 * 86_400)), 12);
    expect(storageUsage({ ...shape, activeS: 1210 }).durableObjectGbMonths).toBeCloseTo(2 * s.durableObjectGbMonths, 12);
  });
});

describe("the storage and Workers Logs lines of a run's cost", () => {
  const parsed = parseRunSpec({ target: "http://127.0.0.1:9", steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 1000, duration: "10m" });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const planned = planRun(parsed.spec, new ArrivalSchedule(parsed.spec.stages).total, DEFAULT_LIMITS);
  if (!planned.ok) throw new Error(JSON.stringify(planned.problems));
  const usage = (options = {}) => estimateUsage(parsed.spec, planned.plan, options);
  const line = (u: ReturnType<typeof usage>, start: string) => estimateCost(u, parsed.spec).lines.find((l) => l.item.startsWith(start))!;

  it("prices D1 storage at $0.75 a GB-month for the retention, and the objects' at $0.20 for the run", () => {
    const u = usage();
    expect(line(u, "D1 storage (90 days kept)").usd).toBeCloseTo(u.storage.d1GbMonths * PRICES.d1StorageGbMonth, 12);
    expect(line(usage({ resultsRetentionDays: 7 }), "D1 storage (7 days kept)").usd).toBeCloseTo(((u.storage.d1GbMonths * 7) / 90) * 0.75, 9);
    expect(line(u, "Durable Object storage (while it runs)").usd).toBeCloseTo(u.storage.durableObjectGbMonths * 0.2, 12);
  });

  it("prices a browser script's screenshots when told how many: a class A write each at $4.50 a million, $0.015 a GB-month for the retention", () => {
    expect(estimateCost(usage(), parsed.spec).lines.map((l) => l.item)).not.toContain("R2 writes (screenshots, class A)");
    const u = usage({ screenshots: 2_000 });
    expect(line(u, "R2 writes (screenshots, class A)").usd).toBeCloseTo((2_000 / 1e6) * 4.5, 12);
    expect(line(u, "R2 storage (screenshots, 90 days kept)").usd).toBeCloseTo(0.6 * 3 * 0.015, 12);
  });

  it("prices Workers Logs per invocation sampled: every object request and alarm, the API's, at $0.60 a million", () => {
    const all = usage({ logsSamplingRate: 1 });
    const invocations = all.durableObjectRequests + all.aggregators.requests + all.workersRequests + all.dynamicWorker.calls;
    expect(all.workersLogsEvents).toBe(invocations);
    expect(line(all, "Workers Logs events (1 sampled)").usd).toBeCloseTo((invocations / 1e6) * 0.6, 12);
    // The project's default keeps one in a hundred; observability off keeps none.
    expect(usage().workersLogsEvents).toBeCloseTo(invocations / 100, 9);
    expect(line(usage({ logsSamplingRate: 0 }), "Workers Logs").usd).toBe(0);
  });
});

describe("shardRowBytes", () => {
  it("holds three whole-run histograms beside the shard's figures: more requests, more buckets", () => {
    expect(shardRowBytes(33_600) - shardRowBytes(1)).toBeGreaterThan(3 * 7_000); // a 1,000,000/s shard's 5 minutes
    expect(shardRowBytes(33_600)).toBeLessThan(3 * histogramRowBytes(33_600) + 1_300);
  });
});
