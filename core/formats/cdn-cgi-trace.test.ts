/**
 * Placement: the colo a shard reports comes from a recorded /cdn-cgi/trace answer, and
 * results are attributed per location hint and per observed colo (a hint is a wish, so
 * two shards of one hint may land in different colos).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Histogram } from "../metrics/histogram.ts";
import { parseQuery, runQuery, type QueryInput, type ShardRow } from "../results/query.ts";
import { coloFromTrace, parseTrace } from "./cdn-cgi-trace.ts";

const RECORDED = readFileSync(join(import.meta.dirname, "../../test/fixtures/cloudflare/cdn-cgi-trace.txt"), "utf8");

describe("/cdn-cgi/trace", () => {
  it("reads every field of a recorded answer, the colo among them", () => {
    const fields = parseTrace(RECORDED);
    expect(fields).toMatchObject({ h: "cloudflare.com", colo: "FRA", loc: "DE", http: "http/1.1" });
    expect(coloFromTrace(RECORDED)).toBe("FRA");
  });

  it.each([
    // [answer, colo, why]
    ["colo=SJC\r\nloc=US\r\n", "SJC", "CRLF line ends"],
    ["<html>rate limited</html>", "unknown", "not a trace answer"],
    ["colo=\n", "unknown", "empty colo"],
    ["colo=frankfurt\n", "unknown", "not an IATA code"],
  ])("%j → %s (%s)", (answer, colo, _why) => {
    expect(coloFromTrace(answer)).toBe(colo);
  });
});

describe("attribution per hint and per observed colo", () => {
  const shard = (shard: number, region: string, colo: string, latencyUs: number): ShardRow => {
    const h = new Histogram();
    for (let i = 0; i < 10; i++) h.record(latencyUs);
    return {
      shard,
      region,
      colo,
      requests: 10,
      failed: 0,
      dropped: 0,
      histograms_json: JSON.stringify({
        http_req_duration: { count: h.count, sum_us: h.sum, min_us: h.min, max_us: h.max, buckets: JSON.stringify(h.buckets()) },
      }),
    };
  };
  // Two weur shards: one landed in FRA, one in AMS; wnam in SJC.
  const input: QueryInput = {
    windows: [],
    histograms: [],
    durationS: 10,
    shards: [shard(0, "weur", "FRA", 10_000), shard(1, "weur", "AMS", 30_000), shard(2, "wnam", "SJC", 50_000)],
  };

  it("groups by hint and colo with each group's own latency", () => {
    const q = parseQuery({ by: "region,colo", metrics: "requests,p50" });
    if (!q.ok) throw new Error(JSON.stringify(q.problems));
    const rows = runQuery(input, q.query).map((r) => [r.region, r.colo, r.requests, Math.round(Number(r.p50))]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ["weur", "FRA", 10, 10],
        ["weur", "AMS", 10, 30],
        ["wnam", "SJC", 10, 50],
      ]),
    );
    expect(rows).toHaveLength(3);
  });
});
