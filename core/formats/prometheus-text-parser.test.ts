import { describe, expect, it } from "vitest";
import { parsePrometheusText, seriesKey, type PromParse, type PromSample } from "./prometheus-text-parser.ts";
import { parseSeriesSelector, selectSamples } from "./series-selector.ts";

/** What prom-client 15 serves for a Node target: default metrics plus the target's own. */
const PROM_CLIENT = `# HELP process_cpu_user_seconds_total Total user CPU time spent in seconds.
# TYPE process_cpu_user_seconds_total counter
process_cpu_user_seconds_total 0.171869

# HELP process_cpu_system_seconds_total Total system CPU time spent in seconds.
# TYPE process_cpu_system_seconds_total counter
process_cpu_system_seconds_total 0.034375

# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 0.206244

# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1763793125

# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 58449920

# HELP nodejs_eventloop_lag_seconds Lag of event loop in seconds.
# TYPE nodejs_eventloop_lag_seconds gauge
nodejs_eventloop_lag_seconds 0.003164791

# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.
# TYPE nodejs_eventloop_lag_p99_seconds gauge
nodejs_eventloop_lag_p99_seconds 0.012410111

# HELP nodejs_heap_space_size_used_bytes Process heap space size used from Node.js in bytes.
# TYPE nodejs_heap_space_size_used_bytes gauge
nodejs_heap_space_size_used_bytes{space="read_only"} 0
nodejs_heap_space_size_used_bytes{space="new"} 1263704
nodejs_heap_space_size_used_bytes{space="old"} 9872344

# HELP nodejs_version_info Node.js version info.
# TYPE nodejs_version_info gauge
nodejs_version_info{version="v24.11.0",major="24",minor="11",patch="0"} 1

# HELP nodejs_gc_duration_seconds Garbage collection duration by kind, one of major, minor, incremental or weakcb.
# TYPE nodejs_gc_duration_seconds histogram
nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 3
nodejs_gc_duration_seconds_bucket{le="0.01",kind="minor"} 5
nodejs_gc_duration_seconds_bucket{le="0.1",kind="minor"} 5
nodejs_gc_duration_seconds_bucket{le="1",kind="minor"} 5
nodejs_gc_duration_seconds_bucket{le="2",kind="minor"} 5
nodejs_gc_duration_seconds_bucket{le="5",kind="minor"} 5
nodejs_gc_duration_seconds_bucket{le="+Inf",kind="minor"} 5
nodejs_gc_duration_seconds_sum{kind="minor"} 0.004612
nodejs_gc_duration_seconds_count{kind="minor"} 5

# HELP target_requests_total Requests served, by route and status code.
# TYPE target_requests_total counter
target_requests_total{route="/app/config",code="200"} 1520
target_requests_total{route="/app/config",code="503"} 7
target_requests_total{route="/token",code="200"} 980
target_requests_total{route="/token",code="500"} 2

# HELP target_request_duration_seconds Request duration, by route.
# TYPE target_request_duration_seconds summary
target_request_duration_seconds{quantile="0.01",route="/token"} 0.0021
target_request_duration_seconds{quantile="0.5",route="/token"} 0.0087
target_request_duration_seconds{quantile="0.9",route="/token"} 0.019
target_request_duration_seconds{quantile="0.99",route="/token"} 0.0405
target_request_duration_seconds_sum{route="/token"} 10.67
target_request_duration_seconds_count{route="/token"} 982
`;

/** The example exposition from the format's documentation (exposition_formats.md). */
const SPEC_EXAMPLE = String.raw`# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
http_requests_total{method="post",code="400"}    3 1395066363000

# Escaping in label values:
msdos_file_access_time_seconds{path="C:\\DIR\\FILE.TXT",error="Cannot find file:\n\"FILE.TXT\""} 1.458255915e9

# Minimalistic line:
metric_without_timestamp_and_labels 12.47

# A weird metric from before the epoch:
something_weird{problem="division by zero"} +Inf -3982045

# HELP jvm_gc_collection_seconds Time spent in a given JVM garbage collector in seconds.
# TYPE jvm_gc_collection_seconds summary
jvm_gc_collection_seconds_count{gc="Copy",} 104.0
jvm_gc_collection_seconds_sum{gc="Copy",} 0.491
`;

function parsed(text: string, options?: { openMetrics?: boolean }): Extract<PromParse, { ok: true }> {
  const result = parsePrometheusText(text, options);
  if (!result.ok) throw new Error(`unexpected problems: ${JSON.stringify(result.problems)}`);
  return result;
}

function find(samples: readonly PromSample[], key: string): PromSample | undefined {
  return samples.find((s) => seriesKey(s) === key);
}

describe("parsePrometheusText", () => {
  it("reads prom-client's exposition for a Node target: gauges, counters, a histogram and a summary", () => {
    const { samples, types, help, format } = parsed(PROM_CLIENT);
    expect(format).toBe("prometheus");
    expect(samples).toHaveLength(30);
    expect(find(samples, "process_cpu_seconds_total")).toEqual({ name: "process_cpu_seconds_total", labels: {}, value: 0.206244 });
    expect(find(samples, "process_resident_memory_bytes")?.value).toBe(58449920);
    expect(find(samples, "nodejs_eventloop_lag_seconds")?.value).toBe(0.003164791);
    expect(find(samples, 'nodejs_version_info{major="24",minor="11",patch="0",version="v24.11.0"}')?.value).toBe(1);
    // The +Inf bucket: its le label stays the string the exposition wrote.
    expect(find(samples, 'nodejs_gc_duration_seconds_bucket{kind="minor",le="+Inf"}')).toEqual({
      name: "nodejs_gc_duration_seconds_bucket",
      labels: { le: "+Inf", kind: "minor" },
      value: 5,
    });
    const quantiles = samples.filter((s) => s.name === "target_request_duration_seconds").map((s) => [s.labels.quantile, s.value]);
    expect(quantiles).toEqual([
      ["0.01", 0.0021],
      ["0.5", 0.0087],
      ["0.9", 0.019],
      ["0.99", 0.0405],
    ]);
    expect(types).toMatchObject({
      process_cpu_seconds_total: "counter",
      process_resident_memory_bytes: "gauge",
      nodejs_gc_duration_seconds: "histogram",
      target_request_duration_seconds: "summary",
    });
    expect(Object.keys(types)).toHaveLength(12);
    expect(help.nodejs_eventloop_lag_seconds).toBe("Lag of event loop in seconds.");
  });

  it("reads the documentation's example: escapes, timestamps, +Inf, a negative timestamp, trailing commas", () => {
    const { samples } = parsed(SPEC_EXAMPLE);
    expect(samples.map(seriesKey)).toEqual([
      'http_requests_total{code="200",method="post"}',
      'http_requests_total{code="400",method="post"}',
      'msdos_file_access_time_seconds{error="Cannot find file:\\n\\"FILE.TXT\\"",path="C:\\\\DIR\\\\FILE.TXT"}',
      "metric_without_timestamp_and_labels",
      'something_weird{problem="division by zero"}',
      'jvm_gc_collection_seconds_count{gc="Copy"}',
      'jvm_gc_collection_seconds_sum{gc="Copy"}',
    ]);
    expect(samples[0]).toEqual({ name: "http_requests_total", labels: { method: "post", code: "200" }, value: 1027, timestampMs: 1395066363000 });
    // Backslashes, a newline and quotes in label values come back unescaped.
    expect(samples[2]!.labels).toEqual({ path: "C:\\DIR\\FILE.TXT", error: 'Cannot find file:\n"FILE.TXT"' });
    expect(samples[2]!.value).toBe(1458255915);
    expect(samples[4]).toEqual({ name: "something_weird", labels: { problem: "division by zero" }, value: Infinity, timestampMs: -3982045 });
    expect(samples[5]!.value).toBe(104);
  });

  it.each([
    // [value as written, number] — Go's ParseFloat syntax
    ["NaN", NaN],
    ["nan", NaN],
    ["+Inf", Infinity],
    ["-Inf", -Infinity],
    ["Inf", Infinity],
    ["+infinity", Infinity],
    ["1e3", 1000],
    ["-1.5E-3", -0.0015],
    [".5", 0.5],
    ["5.", 5],
    ["-0", -0],
    ["+12", 12],
  ])("reads the value %s", (written, value) => {
    expect(parsed(`m ${written}\n`).samples[0]!.value).toBe(value);
  });

  it("takes blanks and tabs between tokens, leading blanks, CRLF line ends and blank lines", () => {
    const { samples } = parsed('\r\n  m { a = "1" , b="2" }\t7 \t 1700000000000 \r\n\n\t# a comment\nn{} 1\r\n');
    expect(samples).toEqual([
      { name: "m", labels: { a: "1", b: "2" }, value: 7, timestampMs: 1700000000000 },
      { name: "n", labels: {}, value: 1 },
    ]);
  });

  it("keeps a label named __proto__ as a label", () => {
    const [sample] = parsed('m{__proto__="x"} 1').samples;
    expect(Object.keys(sample!.labels)).toEqual(["__proto__"]);
    // biome-ignore lint/suspicious/noProto: the test is that a label named __proto__ stays a plain label
    expect(sample!.labels.__proto__).toBe("x");
  });

  it("unescapes HELP text and treats other # lines as comments", () => {
    const { help, types } = parsed(String.raw`# HELP m Path C:\\tmp, second line:\nhere
# TYPE m gauge
# HELPFUL hint: only HELP and TYPE as the first word are special, so this is a comment
#HELP n tight
m 1
`);
    expect(help).toEqual({ m: "Path C:\\tmp, second line:\nhere", n: "tight" });
    expect(types).toEqual({ m: "gauge" });
  });

  it("reports every malformed line with its number and what is wrong", () => {
    const text = [
      "# TYPE ok gauge", // 1
      "ok 1", // 2
      'bad{code="200"', // 3 unclosed labels
      "no_value", // 4
      "m 12abc", // 5
      "m{code=200} 1", // 6 unquoted label value
      'm{path="C:\\d"} 1', // 7 invalid escape
      "m 1 1.5", // 8 fractional timestamp
      "m 1 2 3", // 9 junk after the timestamp
      "9lives 1", // 10 name starts with a digit
      "m-1 1", // 11
      '{job="x"} 1', // 12 no metric name
      "# TYPE x countr", // 13
      "# HELP 1x text", // 14
      'm{a="1",a="2"} 1', // 15
      'm{"a"="1"} 1', // 16
      "m 1e400", // 17 out of range
    ].join("\n");
    const result = parsePrometheusText(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]);
    const detail = (line: number) => result.problems.find((p) => p.line === line)?.detail;
    expect(detail(3)).toMatch(/expected "," or "}" after the value of label "code"/);
    expect(detail(4)).toBe("missing the sample value");
    expect(detail(5)).toMatch(/invalid value "12abc"/);
    expect(detail(6)).toMatch(/expected '"' to open the value of label "code" at column 8/);
    expect(detail(7)).toMatch(/invalid escape "\\d"/);
    expect(detail(8)).toMatch(/invalid timestamp "1.5" \(milliseconds/);
    expect(detail(9)).toMatch(/unexpected "3" after the timestamp/);
    expect(detail(10)).toMatch(/expected a metric name at column 1/);
    expect(detail(11)).toMatch(/unexpected "-" in metric name "m"/);
    expect(detail(13)).toMatch(/unknown type "countr"/);
    expect(detail(14)).toMatch(/expected a metric name after "# HELP"/);
    expect(detail(15)).toBe('label "a" appears twice');
    expect(detail(16)).toMatch(/expected a label name/);
    expect(detail(17)).toMatch(/invalid value "1e400"/);
  });

  it.each([
    // [what the exposition does wrong, text, line, detail]
    ["a second TYPE line", "# TYPE m gauge\n# TYPE m counter\nm 1", 2, /second TYPE line for "m"/],
    ["a second HELP line", "# HELP m one\n# HELP m two\nm 1", 2, /second HELP line for "m"/],
    ["TYPE after the family's samples", 'h_bucket{le="1"} 1\n# TYPE h histogram', 2, /TYPE line for "h" comes after its sample "h_bucket"/],
    ["a histogram bucket without le", '# TYPE h histogram\nh_bucket{code="200"} 1', 2, /histogram sample "h_bucket" needs a "le" label/],
    ["a bucket bound that is not a number", '# TYPE h histogram\nh_bucket{le="big"} 1', 2, /"le" value "big" of "h_bucket" is not a number/],
    ["a summary sample without quantile", '# TYPE s summary\ns{route="/"} 1', 2, /summary sample "s" needs a "quantile" label/],
    ["the same series twice", 'm{a="1",b="2"} 1\nm{b="2",a="1"} 2', 2, /series m\{a="1",b="2"\} appears twice/],
    ["an OpenMetrics type in a 0.0.4 exposition", "# TYPE m unknown\nm 1", 1, /unknown type "unknown"/],
    ["an invalid escape in HELP", "# HELP m a\\tb\nm 1", 1, /invalid escape "\\t" in HELP/],
  ])("refuses %s", (_what, text, line, detail) => {
    const result = parsePrometheusText(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toEqual([{ line, detail: expect.stringMatching(detail) }]);
  });

  it("reads OpenMetrics when it ends with # EOF: seconds timestamps, exemplars, UNIT and its types", () => {
    const text = `# TYPE acme_http_router_request_seconds summary
# UNIT acme_http_router_request_seconds seconds
# HELP acme_http_router_request_seconds Latency \\"quoted\\" for the router.
acme_http_router_request_seconds_sum{path="/api/v1",method="GET"} 9036.32 1520879607.789
acme_http_router_request_seconds_count{path="/api/v1",method="GET"} 807283.0
# TYPE foo counter
foo_total 17.0 1520879607.789 # {trace_id="KOO5S4vxi0o"} 0.67 1520879602.123
foo_created 1520430000.123
# TYPE bar unknown
bar 1
# EOF
`;
    const result = parsed(text);
    expect(result.format).toBe("openmetrics");
    expect(result.types).toEqual({ acme_http_router_request_seconds: "summary", foo: "counter", bar: "unknown" });
    expect(result.help.acme_http_router_request_seconds).toBe('Latency "quoted" for the router.');
    expect(result.samples[0]!.timestampMs).toBe(1520879607789);
    expect(result.samples[2]).toEqual({ name: "foo_total", labels: {}, value: 17, timestampMs: 1520879607789 });
    expect(result.samples).toHaveLength(5);
  });

  it("refuses text after # EOF, an exemplar in 0.0.4 and a malformed exemplar", () => {
    const afterEof = parsePrometheusText("a 1\n# EOF\nb 2\n");
    expect(afterEof).toEqual({ ok: false, problems: [{ line: 3, detail: 'nothing may follow "# EOF" (line 2)' }] });
    const problem = (text: string, options?: { openMetrics?: boolean }) => {
      const result = parsePrometheusText(text, options);
      return result.ok ? "parsed" : result.problems.map((p) => `${p.line}: ${p.detail}`).join("; ");
    };
    expect(problem('c_total 1 # {trace_id="x"} 1\n')).toMatch(/^1: unexpected "# \{trace_id="x"\} 1" after the value/);
    expect(problem("c_total 1 # trace 1\n", { openMetrics: true })).toMatch(/^1: expected an exemplar's "\{"/);
    expect(problem('c_total 1 # {a="b"} 1 # {c="d"} 2\n', { openMetrics: true })).toMatch(/^1: in the exemplar: unexpected "# \{c="d"\} 2"/);
    // Forced to 0.0.4, "# EOF" is a comment and the integer timestamp is milliseconds.
    expect(parsed("a 1 1500\n# EOF\n", { openMetrics: false }).samples).toEqual([{ name: "a", labels: {}, value: 1, timestampMs: 1500 }]);
  });
});

describe("parseSeriesSelector and selectSamples", () => {
  const { samples } = parsed(PROM_CLIENT);
  const names = (selector: string) => {
    const parsedSelector = parseSeriesSelector(selector);
    if (!parsedSelector.ok) throw new Error(parsedSelector.error.detail);
    return selectSamples(samples, parsedSelector.selector).map(seriesKey);
  };

  it.each([
    // [selector, the series it selects] — one row per operator and rule
    ["process_resident_memory_bytes", ["process_resident_memory_bytes"]],
    [
      'target_requests_total{route="/app/config"}',
      ['target_requests_total{code="200",route="/app/config"}', 'target_requests_total{code="503",route="/app/config"}'],
    ],
    ['target_requests_total{code!="200"}', ['target_requests_total{code="503",route="/app/config"}', 'target_requests_total{code="500",route="/token"}']],
    ['target_requests_total{code=~"5.."}', ['target_requests_total{code="503",route="/app/config"}', 'target_requests_total{code="500",route="/token"}']],
    ['target_requests_total{code!~"2..|503"}', ['target_requests_total{code="500",route="/token"}']],
    // Regexes are anchored at both ends: "5" matches no code, "50" neither.
    ['target_requests_total{code=~"5"}', []],
    // A label the series lacks reads as "": so = "" selects the series without it.
    ['nodejs_gc_duration_seconds_sum{le=""}', ['nodejs_gc_duration_seconds_sum{kind="minor"}']],
    // No metric name: a regex on __name__ plus a label.
    ['{__name__=~"process_cpu_.*_total", __name__!~".*user.*"}', ["process_cpu_system_seconds_total", "process_cpu_seconds_total"]],
    // (?i) is case-insensitive; single quotes, backticks and a trailing comma are PromQL too.
    ["target_requests_total{route=~'(?i)/APP/.*', code=`200`,}", ['target_requests_total{code="200",route="/app/config"}']],
    ['nodejs_gc_duration_seconds_bucket{le=~"\\\\+Inf"}', ['nodejs_gc_duration_seconds_bucket{kind="minor",le="+Inf"}']],
    ["no_such_metric", []],
  ])("%s", (selector, expected) => {
    expect(names(selector)).toEqual(expected);
  });

  it("returns the matchers as plain data, the metric name as __name__", () => {
    expect(parseSeriesSelector('  http_requests_total { code =~ "5.." } ')).toEqual({
      ok: true,
      selector: {
        text: '  http_requests_total { code =~ "5.." } ',
        matchers: [
          { label: "__name__", op: "=", value: "http_requests_total" },
          { label: "code", op: "=~", value: "5.." },
        ],
      },
    });
  });

  it.each([
    // [bad selector, reason, what the error says]
    ["", "syntax", /expected a metric name or "\{" at column 1/],
    ['m{code="200"', "syntax", /the "\{" at column 2 is not closed/],
    ['m{code=="200"}', "syntax", /expected a quoted string at column 8/],
    ['m{code<"200"}', "syntax", /expected =, !=, =~ or !~ after "code" at column 7/],
    ["m{code=200}", "syntax", /expected a quoted string/],
    ['m{code="200" route="/"}', "syntax", /expected "," or "\}" after the matcher on "code"/],
    ['m{code="5\\d\\d"}', "syntax", /invalid escape "\\d" at column 10.*backticks/],
    ['m{code="2"} extra', "syntax", /unexpected "extra" at column 13/],
    ['m{__name__="n"}', "syntax", /metric name is given twice/],
    ['m{code=~"5(0"}', "regex", /invalid regex "5\(0" for "code"/],
    ['m{code=~"a)|(b"}', "regex", /invalid regex/],
    ['m{code=~"(?m)x"}', "regex", /flags \(\?m\) are not supported/],
    ['{code=~".*"}', "matches-everything", /needs a metric name or a matcher that does not match the empty string/],
    ['{code=""}', "matches-everything", /needs a metric name/],
  ])("refuses %s", (selector, reason, detail) => {
    const result = parseSeriesSelector(selector);
    expect(result).toEqual({ ok: false, error: { reason, detail: expect.stringMatching(detail) } });
  });
});
