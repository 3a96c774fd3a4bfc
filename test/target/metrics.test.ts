/**
 * GET /metrics of the target (workers/target/metrics.ts, prometheus.ts) inside workerd:
 * the text exposition format 0.0.4 with HELP and TYPE for every family, request counters
 * and histograms that follow the requests made, and the config and stream series of the
 * ConfigHub — the open-stream gauge rises while a stream is open and falls when it is
 * cancelled.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Histogram, renderExposition, type MetricFamily } from "../../workers/target/prometheus.ts";

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(`http://target.test${path}`, init));
}

interface Scrape {
  readonly text: string;
  /** Families declared by `# TYPE`, by name. */
  readonly types: ReadonlyMap<string, string>;
  readonly helps: ReadonlySet<string>;
  /** Sample lines as `name{labels}` → value. */
  readonly samples: ReadonlyMap<string, number>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$/;

async function scrape(): Promise<Scrape> {
  const response = await call("/metrics");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await response.text();
  expect(text.endsWith("\n")).toBe(true);
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples = new Map<string, number>();
  for (const line of text.slice(0, -1).split("\n")) {
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    const help = /^# HELP (\S+) \S.*$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    else if (help) helps.add(help[1]!);
    else {
      const sample = SAMPLE.exec(line);
      expect(sample, `a sample line: ${line}`).not.toBeNull();
      samples.set(`${sample![1]}${sample![2] ?? ""}`, Number(sample![3]!.replace("+Inf", "Infinity")));
    }
  }
  return { text, types, helps, samples };
}

/** The family a sample belongs to: histogram samples carry a suffix. */
const familyOf = (name: string, types: ReadonlyMap<string, string>) => (types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, ""));

async function openStream(): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const response = await call("/app/config/stream", { headers: { accept: "text/event-stream" } });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  await reader.read(); // the first event: the hub has registered the stream
  return reader;
}

/**
 * Scrapes until `predicate` holds (the hub drops a cancelled stream asynchronously), up to
 * 2 s: well under the default 15 s heartbeat, so the drop must come from the cancellation.
 */
async function settle(predicate: (s: Scrape) => boolean): Promise<Scrape> {
  const deadlineMs = Date.now() + 2_000;
  for (;;) {
    const s = await scrape();
    if (predicate(s) || Date.now() > deadlineMs) return s;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("GET /metrics", () => {
  it("declares HELP and TYPE for every family, and every sample belongs to a declared family", async () => {
    await call("/app/config");
    const { types, helps, samples } = await scrape();
    expect([...types.keys()].sort()).toEqual([
      "target_config_version",
      "target_config_writes_total",
      "target_event_loop_lag_seconds",
      "target_records_cache_lookups_total",
      "target_request_duration_seconds",
      "target_requests_total",
      "target_sse_streams_open",
    ]);
    expect(types.get("target_requests_total")).toBe("counter");
    expect(types.get("target_request_duration_seconds")).toBe("histogram");
    expect(types.get("target_sse_streams_open")).toBe("gauge");
    expect([...helps].sort()).toEqual([...types.keys()].sort());
    for (const sample of samples.keys()) expect(types.has(familyOf(sample.replace(/\{.*$/, ""), types)), sample).toBe(true);
    // A Worker cannot see its own CPU or memory: no process_* series are invented.
    expect([...samples.keys()].some((name) => name.startsWith("process_"))).toBe(false);
    expect(samples.get("target_event_loop_lag_seconds")).toBeGreaterThanOrEqual(0);
  });

  it("counts requests per route pattern and times them in a cumulative histogram", async () => {
    const counter = 'target_requests_total{route="/app/v1/records/:key",method="GET",code="404"}';
    const before = (await scrape()).samples.get(counter) ?? 0;
    for (const key of ["m-1", "m-2", "m-3"]) expect((await call(`/app/v1/records/${key}`)).status).toBe(404);
    const { samples } = await scrape();
    expect(samples.get(counter)).toBe(before + 3); // three keys, one route label

    const labels = 'route="/app/v1/records/:key",method="GET"';
    const buckets = [...samples].filter(([name]) => name.startsWith(`target_request_duration_seconds_bucket{${labels},le=`));
    expect(buckets.length).toBeGreaterThan(5);
    const counts = buckets.map(([, value]) => value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b)); // cumulative: never decreasing
    expect(buckets.at(-1)![0]).toContain('le="+Inf"');
    expect(counts.at(-1)).toBe(samples.get(`target_request_duration_seconds_count{${labels}}`));
    expect(samples.get(`target_request_duration_seconds_sum{${labels}}`)).toBeGreaterThanOrEqual(0);
  });

  it("reports the config version and counts config writes", async () => {
    const before = await scrape();
    const put = await call("/app/config/metrics.test", {
      method: "PUT",
      headers: { authorization: "Bearer admin-test-secret" },
      body: JSON.stringify({ value: 1 }),
    });
    const { version } = await put.json<{ version: number }>();
    const after = await scrape();
    expect(after.samples.get("target_config_version")).toBe(version);
    expect(after.samples.get("target_config_writes_total")).toBe(before.samples.get("target_config_writes_total")! + 1);
  });

  it("counts an SSE stream as open while it is, and not after it is cancelled", async () => {
    const open = "target_sse_streams_open";
    const baseline = (await scrape()).samples.get(open)!;
    const reader = await openStream();
    expect((await scrape()).samples.get(open)).toBe(baseline + 1);
    await reader.cancel();
    expect((await settle((s) => s.samples.get(open) === baseline)).samples.get(open)).toBe(baseline);
  });
});

describe("the exposition format (workers/target/prometheus.ts)", () => {
  const gauge = (labels: Record<string, string>, value: number): MetricFamily => ({ name: "g", help: "A gauge.", type: "gauge", samples: [{ labels, value }] });

  it.each([
    // no labels: the name, a space, the value
    [gauge({}, 3), "g 3"],
    // label values escape backslash, double quote and line feed
    [gauge({ path: 'a\\b"c\nd' }, 1), 'g{path="a\\\\b\\"c\\nd"} 1'],
    // infinities and NaN in Go's spelling
    [gauge({}, Infinity), "g +Inf"],
    [gauge({}, Number.NaN), "g NaN"],
    // fractions as they are
    [gauge({ a: "1", b: "2" }, 0.25), 'g{a="1",b="2"} 0.25'],
  ])("%j → the sample line %s", (family, line) => {
    expect(renderExposition([family])).toBe(`# HELP g A gauge.\n# TYPE g gauge\n${line}\n`);
  });

  it("escapes backslashes and line feeds in HELP", () => {
    expect(renderExposition([{ name: "x", help: "a\\b\nc", type: "counter", samples: [] }])).toBe("# HELP x a\\\\b\\nc\n# TYPE x counter\n");
  });

  it("renders a histogram with cumulative le buckets, +Inf, _sum and _count", () => {
    const histogram = new Histogram([0.1, 1]);
    for (const value of [0.05, 0.1, 0.5, 3]) histogram.observe(value);
    expect(renderExposition([{ name: "h", help: "H.", type: "histogram", samples: histogram.samples({ r: "x" }) }])).toBe(
      [
        "# HELP h H.",
        "# TYPE h histogram",
        'h_bucket{r="x",le="0.1"} 2', // 0.05 and 0.1: a bound includes its own value
        'h_bucket{r="x",le="1"} 3',
        'h_bucket{r="x",le="+Inf"} 4', // 3 is above every bound
        'h_sum{r="x"} 3.65',
        'h_count{r="x"} 4',
        "",
      ].join("\n"),
    );
  });
});
