import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { ArrivalSchedule } from "../core/schedule/arrival-schedule.ts";
import { Histogram } from "../core/metrics/histogram.ts";
import { planRun } from "../core/plan/plan.ts";
import type { HistogramRow, QueryInput, QueryRow, WindowRow } from "../core/results/query.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import { RunTotals } from "../core/run/run-totals.ts";
import { MetricStats } from "../core/metrics/metric-stats.ts";
import { reconcileDelivery } from "../core/run/delivery.ts";
import type { ShardTelemetry } from "../core/run/protocol.ts";
import { buildSummary, type Summary } from "../core/run/summary.ts";
import { roundToResolution } from "../core/metrics/clock-resolution.ts";
import { costLine } from "../core/plan/actual-cost.ts";
import { CHART_FILES, LATENCY_COLUMNS, latencyBins, renderReport } from "./report.ts";
import { reportInput, targetProfile } from "./report-input.ts";
import { indexEntry, updateIndex } from "./report-index.ts";

/**
 * A 4-second run at 10/s in two regions with two steps: wnam answers in 10 ms, weur in
 * 400 ms and fails a tenth of its requests. The summary and the stored rows describe the
 * same requests, as the coordinator's totals and D1 do.
 */
function fixture(overrides: Record<string, unknown> = {}, telemetry: ShardTelemetry | null = null) {
  const parsed = parseRunSpec({
    name: "report fixture",
    target: "http://127.0.0.1:9090",
    steps: [
      { name: "login", path: "/login" },
      { name: "userinfo", path: "/userinfo" },
    ],
    executor: "constant-arrival-rate",
    rate: 10,
    duration: "4s",
    shards: 2,
    regions: ["wnam", "weur"],
    thresholds: { http_req_duration: ["p(95)<50", "p(99)<1000"], http_req_failed: ["rate<0.5"] },
    ...overrides,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const spec = parsed.spec;
  const planned = planRun(spec, new ArrivalSchedule(spec.stages).total);
  if (!planned.ok) throw new Error("plan failed");

  const latencyMs = { wnam: 10, weur: 400 } as const;
  const totals = new RunTotals();
  const windows: WindowRow[] = [];
  const histograms: HistogramRow[] = [];
  (["wnam", "weur"] as const).forEach((region, shard) => {
    spec.steps.forEach((step, stepIndex) => {
      for (let t = 0; t < 4; t++) {
        const stats = new MetricStats();
        const h = new Histogram();
        const n = 3 + t; // a rising count, so per-second figures differ
        const iterations = stepIndex === spec.steps.length - 1 ? n : 0; // an iteration counts at its last step
        stats.counters.iterations += iterations;
        for (let i = 0; i < n; i++) {
          const us = (latencyMs[region] + i) * 1000;
          stats.counters.sent++;
          stats.counters.completed++;
          stats.trends.duration.record(us);
          stats.countStatus(200);
          h.record(us);
        }
        const failed = region === "weur" && t === 3 ? 1 : 0;
        stats.counters.failed += failed;
        totals.add(shard, region, stepIndex, stats);
        windows.push({
          window_s: t,
          region,
          step: step.name,
          requests: n,
          iterations,
          failed,
          dropped: 0,
          timeouts: 0,
          connection_errors: 0,
          status_4xx: 0,
          status_5xx: failed,
          statuses_json: JSON.stringify({ 200: n }),
        });
        histograms.push({
          window_s: t,
          region,
          step: step.name,
          metric: "http_req_duration",
          count: h.count,
          sum_us: h.sum,
          min_us: h.min,
          max_us: h.max,
          buckets: JSON.stringify(h.buckets()),
        });
      }
    });
  });
  const summary = buildSummary({
    runId: "r-mk0abc12-0123abcd",
    status: "failed",
    spec,
    plan: planned.plan,
    t0Ms: Date.UTC(2026, 10, 22, 9, 0, 0),
    endMs: Date.UTC(2026, 10, 22, 9, 0, 4),
    totals,
    shards: planned.plan.shards.map((s) => ({ index: s.index, region: s.region, segment: s.segment, colo: "local", telemetry })),
  });
  const rows: QueryInput = { windows, histograms, shards: [], durationS: 4 };
  return { summary, rows, input: reportInput(summary, rows) };
}

/** The rows of the markdown table that follows `heading`, as cells. */
function tableAfter(markdown: string, heading: string): string[][] {
  const rest = markdown.slice(markdown.indexOf(`${heading}\n`));
  const lines = rest.split("\n").slice(1);
  const start = lines.findIndex((l) => l.startsWith("|"));
  const table: string[] = [];
  for (const l of lines.slice(start)) {
    if (!l.startsWith("|")) break;
    table.push(l);
  }
  return table.slice(2).map((l) => l.slice(2, -2).split(" | "));
}

/** Every element of a parsed SVG (fast-xml-parser's ordered form) with its attributes. */
function elements(svg: string): Array<{ tag: string; attrs: Record<string, string> }> {
  const tree = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", preserveOrder: true }).parse(svg) as unknown[];
  const out: Array<{ tag: string; attrs: Record<string, string> }> = [];
  const walk = (nodes: unknown[]) => {
    for (const node of nodes as Array<Record<string, unknown>>) {
      for (const [tag, children] of Object.entries(node)) {
        if (tag === ":@" || tag === "#text") continue;
        out.push({ tag, attrs: (node[":@"] ?? {}) as Record<string, string> });
        walk(children as unknown[]);
      }
    }
  };
  walk(tree);
  return out;
}

const lineLabels = (svg: string) =>
  elements(svg)
    .filter((e) => e.tag === "path" && e.attrs["aria-roledescription"] === "line mark")
    .map((e) => e.attrs["aria-label"] ?? "");

describe("renderReport", async () => {
  const { summary, input } = fixture();
  const report = await renderReport(input);
  // The fixture's shards report no clock: figures keep two decimals (roundToResolution).
  const step = summary.edgeload.clock.resolutionMs;

  it("writes every chart as a well-formed SVG document", () => {
    expect(Object.keys(report.charts).sort()).toEqual(Object.values(CHART_FILES).sort());
    for (const [file, svg] of Object.entries(report.charts)) {
      expect(XMLValidator.validate(svg), file).toBe(true);
      expect(svg.startsWith("<svg"), file).toBe(true);
    }
  });

  it("draws one latency line per region and percentile, one error line per region, target and achieved rate", () => {
    const latency = lineLabels(report.charts[CHART_FILES.latency]!);
    expect(latency).toHaveLength(6);
    for (const region of ["wnam", "weur"]) {
      for (const p of ["p50", "p95", "p99"])
        expect(
          latency.some((l) => l.includes(`region: ${region}`) && l.includes(`percentile: ${p}`)),
          `${region} ${p}`,
        ).toBe(true);
    }
    const errors = lineLabels(report.charts[CHART_FILES.errors]!);
    expect(errors.map((l) => /region: (\w+)/.exec(l)?.[1]).sort()).toEqual(["weur", "wnam"]);
    const rate = lineLabels(report.charts[CHART_FILES.rate]!);
    expect(rate.map((l) => /series: (\w+)/.exec(l)?.[1]).sort()).toEqual(["achieved", "target"]);
  });

  it("draws a bar per latency bin and a rule at each whole-run percentile", () => {
    const svg = report.charts[CHART_FILES.histogram]!;
    const bars = elements(svg).filter((e) => e.tag === "path" && e.attrs["aria-roledescription"] === "bar");
    expect(bars).toHaveLength(latencyBins(input.latencyBuckets).length);
    expect(
      latencyBins(input.latencyBuckets)
        .map((b) => b.count)
        .reduce((a, b) => a + b),
    ).toBe(input.overall!.requests);
    const rules = elements(svg).filter((e) => e.tag === "line" && e.attrs["aria-roledescription"] === "rule mark");
    expect(rules).toHaveLength(3);
  });

  it("prints the latency tables as the query rows give them, to the run's clock step", () => {
    const byRegion = tableAfter(report.markdown, "### By region");
    const expected: Array<[string, QueryRow]> = [["all", input.overall!], ...input.byRegion.map((r): [string, QueryRow] => [String(r.region), r])];
    expect(byRegion.map((r) => r[0])).toEqual(expected.map(([label]) => label));
    byRegion.forEach((cells, i) => {
      const row = expected[i]![1];
      expect(Number(cells[1])).toBe(row.requests);
      expect(Number(cells[2])).toBe(row.rps);
      expect(parseFloat(cells[3]!) / 100).toBeCloseTo(row.error_rate as number, 9);
      LATENCY_COLUMNS.forEach((c, j) => expect(Number(cells[4 + j]), `${cells[0]} ${c}`).toBe(roundToResolution(row[c] as number, step)));
    });
    const bySteps = tableAfter(report.markdown, "### By step");
    expect(bySteps.map((r) => [r[0], Number(r[6])])).toEqual(input.byStep.map((r) => [r.step, roundToResolution(r.p95 as number, step)]));
  });

  it("takes the global p95 from merged histograms, never the mean of the regions' p95s", () => {
    // Half the requests are weur's at ≥ 400 ms, so the whole run's p95 is ~400 ms; the mean of
    // the two regional p95s would be ~205 ms.
    const all = tableAfter(report.markdown, "### By region")[0]!;
    expect(Number(all[6])).toBeGreaterThan(400);
    expect(Number(all[6])).toBe(roundToResolution(input.overall!.p95 as number, step));
  });

  it("states the plan, the totals against the target, and each threshold's outcome", () => {
    const matrix = Object.fromEntries(tableAfter(report.markdown, "## Test matrix").map(([k, v]) => [k, v]));
    expect(matrix.target).toBe("`http://127.0.0.1:9090`");
    expect(matrix.regions).toBe("wnam, weur");
    expect(matrix.workload).toBe("steps `login`, `userinfo`");
    expect(matrix["target rate"]).toMatch(/^10\/s mean, 10\/s peak, 40 iterations$/);
    const figures = Object.fromEntries(tableAfter(report.markdown, "## Summary").map(([k, v]) => [k, v]));
    expect(figures.requests).toBe(`${summary.edgeload.totals.requests} (${summary.edgeload.totals.ratePerS}/s)`);
    expect(figures.thresholds).toBe("1 of 3 failed");
    const thresholds = tableAfter(report.markdown, "## Thresholds");
    expect(thresholds.map((r) => [r[1], r[3]])).toEqual([
      ["`p(95)<50`", "✗ fail"],
      ["`p(99)<1000`", "✓ pass"],
      ["`rate<0.5`", "✓ pass"],
    ]);
  });

  it("states what the run cost beside its plan, and the latency measured; a summary stored before it, no cost row (issue 49)", async () => {
    const matrix = Object.fromEntries(tableAfter(report.markdown, "## Test matrix").map(([k, v]) => [k, v]));
    expect(matrix.cost).toBe(costLine(summary.edgeload.cost));
    expect(matrix.cost).toMatch(/^\$\S+ run up \(\$\S+ per million requests\), \$\S+ planned/);
    const { cost: _absent, ...older } = summary.edgeload;
    const stored = await renderReport({ ...input, summary: { ...summary, edgeload: older } as Summary });
    expect(Object.keys(Object.fromEntries(tableAfter(stored.markdown, "## Test matrix")))).not.toContain("cost");
  });

  it("says why a run was inconclusive, and marks a threshold without data as such", async () => {
    const { summary: base } = fixture();
    const e = base.edgeload;
    const summary = {
      ...base,
      edgeload: {
        ...e,
        status: "inconclusive",
        exitCode: 75,
        verdict: { kind: "inconclusive", reasons: ["1 of 2 shards never reported done: what they measured is missing"] },
        thresholds: [{ ...e.thresholds[0]!, observed: null, state: "no-data", ok: false }],
      },
    } as Summary;
    const { markdown } = await renderReport({ ...input, summary });
    expect(markdown).toContain("Verdict: INCONCLUSIVE (exit 75).");
    expect(markdown).toContain("- 1 of 2 shards never reported done: what they measured is missing");
    expect(tableAfter(markdown, "## Thresholds")[0]![3]).toBe("? no data");
    expect(Object.fromEntries(tableAfter(markdown, "## Summary").map(([k, v]) => [k, v])).thresholds).toBe("1 without data");
  });

  it("names why a run ended as it did: 'aborted' only for an abort, 'why' for a run the script marked failed", async () => {
    const { summary: base } = fixture();
    const ended = (status: string, abortReason: string) => ({ ...base, edgeload: { ...base.edgeload, status, abortReason } }) as Summary;
    const first = async (summary: Summary) => (await renderReport({ ...input, summary })).markdown.split("\n").find((l) => l.startsWith("Run "));
    expect(await first(ended("aborted", "aborted by user"))).toContain(" · aborted: aborted by user");
    const marked = await first(ended("failed", "marked failed by the script: soft assertion"));
    expect(marked).toContain(" · why: marked failed by the script: soft assertion");
    expect(marked).not.toContain("aborted");
  });

  it("shows what edgeload did not send, with its causes and bound; a summary stored before it, the restarts alone", async () => {
    const { summary: base } = fixture();
    const figures = async (summary: Summary) =>
      Object.fromEntries(tableAfter((await renderReport({ ...input, summary })).markdown, "## Summary").map(([k, v]) => [k, v]));
    expect((await figures(base))["iterations not sent by edgeload"]).toBe("0");
    const notSent = { count: 2, restarts: 2, unstarted: 0, scheduled: 40, share: 0.05, bound: 0.01 };
    const lost = { ...base, edgeload: { ...base.edgeload, totals: { ...base.edgeload.totals, interrupted: 2, notSent } } } as Summary;
    expect((await figures(lost))["iterations not sent by edgeload"]).toBe("2 (5 % of 40): 2 lost to shard restarts; bound 1 %");
    const { notSent: _absent, ...older } = lost.edgeload.totals;
    const stored = await figures({ ...lost, edgeload: { ...lost.edgeload, totals: older } } as Summary);
    expect(stored["iterations lost to shard restarts"]).toBe("2");
  });

  it("links each chart from the markdown and inlines it in the HTML", () => {
    for (const file of Object.values(CHART_FILES)) expect(report.markdown).toContain(`](${file})`);
    expect(report.html.match(/<svg /g)).toHaveLength(4);
    expect(report.html).toContain(summary.edgeload.runId);
    expect(report.html).toContain(`<td class="num">${input.overall!.p95}</td>`);
  });

  it("renders the same bytes for the same input", async () => {
    const again = await renderReport(input);
    expect(again.markdown).toBe(report.markdown);
    expect(again.html).toBe(report.html);
    expect(again.charts).toEqual(report.charts);
  });

  it("renders without generating code from strings, as a Worker must", async () => {
    // workerd refuses `eval` and `new Function`, but the vitest workers pool allows them, so
    // the rule is enforced here: with Function replaced by one that throws, charts still render.
    const original = globalThis.Function;
    globalThis.Function = (() => {
      throw new EvalError("Code generation from strings disallowed for this context");
    }) as unknown as FunctionConstructor;
    try {
      expect((await renderReport(input)).charts).toEqual(report.charts);
    } finally {
      globalThis.Function = original;
    }
  });

  it("lists a scenario's custom metrics, declared counters at zero included", async () => {
    const withScenario: Summary = {
      ...summary,
      edgeload: {
        ...summary.edgeload,
        scenario: {
          name: "introspect",
          seed: "tokens-3k",
          preset: "rps100",
          metrics: { false_positives: { type: "counter", count: 0, rate: 0 }, active_correct: { type: "rate", passes: 99, fails: 1, value: 0.99 } },
        },
      },
    };
    const md = (await renderReport({ ...input, summary: withScenario })).markdown;
    expect(tableAfter(md, "## Scenario metrics (introspect)")).toEqual([
      ["`false_positives`", "counter", "0 (0/s)"],
      ["`active_correct`", "rate", "99% (99 of 100)"],
    ]);
    expect(md).toContain("| workload | scenario `introspect` with seed set `tokens-3k` |");
  });
});

describe("renderReport: how far the latencies can be trusted", async () => {
  const telemetry: ShardTelemetry = {
    region: "wnam",
    colo: "local",
    invocations: 1,
    restarts: 0,
    subrequests: 56,
    peakInFlight: 2,
    clockResolutionUs: 1000,
    behindCloudflare: true,
  };
  const { input } = fixture({}, telemetry);
  const report = await renderReport(input);

  it("states the clock's step, flags the distribution's two groups and the path through Cloudflare", () => {
    expect(report.markdown).toContain("Clock: the shards' clock moved in 1 ms steps");
    // wnam answers in ~10 ms, weur in ~400 ms: two groups no percentile describes.
    expect(report.markdown).toMatch(/Distribution bimodal: two groups of latencies, around \d+(\.\d+)? ms and \d+(\.\d+)? ms/);
    expect(report.markdown).toContain("Path: the target answered through Cloudflare (cf-ray)");
  });

  it("marks the clock's step on the distribution chart", () => {
    expect(report.charts[CHART_FILES.histogram]).toContain("timed with a clock of 1 ms steps");
  });

  it("says none of it for a run without those findings", async () => {
    const plain = await renderReport(fixture().input);
    expect(plain.markdown).not.toMatch(/^Clock:|^Path:/m);
    expect(plain.charts[CHART_FILES.histogram]).not.toContain("timed with a clock");
  });
});

describe("renderReport: delivery", async () => {
  const { input } = fixture();
  const delivery = reconcileDelivery(
    [
      { second: 0, step: "login", sent: 10 },
      { second: 1, step: "login", sent: 10 },
    ],
    [
      { second: 0, step: "login", count: 10 },
      { second: 1, step: "login", count: 8 },
    ],
    { connectionErrors: 2, timeouts: 0 },
  );
  const report = await renderReport({ ...input, delivery });

  it("sets sent against received in the shape of the Cloudflare section: period, counts, difference, findings", () => {
    expect(report.markdown).toContain("## Delivery (sent against received)");
    expect(tableAfter(report.markdown, "## Delivery (sent against received)")).toEqual([
      ["1 s · login", "10", "8", "-2"],
      ["step login", "20", "18", "-2"],
      ["run total", "20", "18", "-2"],
    ]);
    expect(report.markdown).toContain("2 never reached the target: the client could not connect (connection errors)");
  });
});

describe("targetProfile", () => {
  it.each([
    // A constant 10/s for 4 s: 10 each second.
    [{}, 4, [10, 10, 10, 10]],
    // 0 → 10/s over 2 s: the ramp's area per second, 2.5 then 7.5; then 10/s for 1 s.
    [
      {
        executor: "ramping-arrival-rate",
        rate: undefined,
        duration: undefined,
        stages: [
          { target: 10, duration: "2s" },
          { target: 10, duration: "1s" },
        ],
      },
      3,
      [2.5, 7.5, 10],
    ],
    // 60 per minute is 1/s; a partial last second gets its share.
    [{ rate: 60, timeUnit: "1m", duration: "2.5s" }, 2.5, [1, 1, 0.5]],
  ])("%j → %d s, %j per second", (overrides, durationS, perSecond) => {
    expect(targetProfile(fixture(overrides).summary)).toEqual({ durationS, perSecond });
  });
});

describe("updateIndex", () => {
  const { input } = fixture();
  const later = {
    ...input,
    summary: { ...input.summary, edgeload: { ...input.summary.edgeload, startedAt: "2026-11-23T10:00:00.000Z", runId: "r-mk0abc99-99999999" } },
  };
  const rowsOf = (index: string) => index.split("\n").filter((l) => l.startsWith("| ["));

  it("starts an index whose row shows the whole-run query figures", () => {
    const index = updateIndex(null, indexEntry("baseline", input));
    expect(index).toMatch(/^# Load test reports\n/);
    const o = input.overall!;
    expect(rowsOf(index)).toEqual([
      `| [baseline](baseline/report.md) | 2026-11-22 09:00 UTC | \`r-mk0abc12-0123abcd\` | failed | ${o.requests} | ${o.rps} | ${o.p95} | ${o.p99} | 2.7778% | failed |`,
    ]);
  });

  it("keeps one row per report name, newest run first", () => {
    let index = updateIndex(null, indexEntry("baseline", input));
    index = updateIndex(index, indexEntry("candidate", later));
    index = updateIndex(index, indexEntry("baseline", input)); // made again: replaced, not added
    expect(rowsOf(index).map((r) => r.slice(0, r.indexOf("]")))).toEqual(["| [candidate", "| [baseline"]);
  });
});
