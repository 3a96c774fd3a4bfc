/**
 * The k6 API as one VU sees it: `k6`, `k6/http`, `k6/metrics`, `k6/data`, `k6/execution`
 * and `k6/encoding`, built per VU over its context. Plain JavaScript over an injected host,
 * so the same objects serve the init context in Node (host absent: no requests, metric
 * declarations collected) and the VUs in a shard's loaded isolate.
 *
 * Requests leave through the host (the shard's engine sends and times them); checks and
 * custom metrics are buffered as samples and travel with the next request, sleep or the
 * iteration's end.
 */
import { redirectLimit } from "./redirect-limit.ts";
import { GROUP_DURATION, SOCKET_METRICS, type IterationHost, type Sample, type WireRequest } from "./wire.ts";
import { b64decode, b64encode } from "./encoding.ts";
import { crypto } from "./crypto.ts";
import { CookieJar, requestCookies } from "./cookie-jar.ts";
import { k6Response, type HtmlParser, type K6Response } from "./k6-response.ts";
import { formBody, withoutCredentials } from "./request-encoding.ts";
import { scriptConsole } from "./script-console.ts";
import { VuEventLoop } from "./event-loop.ts";
import { createTimers } from "./timers.ts";
import { createWebSockets } from "./websockets.ts";
import { createLegacyWs } from "./ws-legacy.ts";

export type MetricType = "counter" | "gauge" | "rate" | "trend";

export interface VuContext {
  /** __VU (0 in the init context, as in k6). */
  readonly id: number;
  /** The VU's own iteration number (__ITER). */
  iteration: number;
  iterationInTest: number;
  scenario: { name: string; executor: string; startTimeMs: number };
  samples: Sample[];
  /** The shard's side of the running iteration; null in the init context. */
  host: IterationHost | null;
  /** Called for every metric the script creates (the init context collects them). */
  readonly declare?: (name: string, type: MetricType, isTime: boolean) => void;
  /** The VU's own cookie jar (emptied at each iteration, as k6's default jar). */
  jar: CookieJar;
  /** The process's SharedArrays by name: data is built once per isolate. */
  readonly shared: Map<string, readonly unknown[]>;
  /** exec.test.abort()'s message once the VU called it ("" without one): the run stops (script-failure.ts). */
  aborted?: string;
  /** k6's `group` tag of what the VU records now: "" at the root, `::outer::inner` inside groups. */
  group?: string;
  /** The script's options.maxRedirects, when it sets one (redirect-limit.ts). */
  maxRedirects?: number;
  /** Timers and WebSockets the running iteration waits for (event-loop.ts); made by createVuModules. */
  loop?: VuEventLoop;
}

const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function createVuModules(vu: VuContext): Record<string, unknown> {
  // k6/html's parser travels only with the scripts that use HTML (bundle.ts): ~200 KB.
  let htmlParser: HtmlParser | null = null;
  const parseHtml: HtmlParser = (source) => {
    if (!htmlParser)
      throw new Error(
        "res.html()/parseHTML: the HTML parser was not bundled with this script (edgeload adds it when a script calls .html( or imports k6/html)",
      );
    return htmlParser(source);
  };
  const host = (call: string): IterationHost => {
    if (!vu.host) throw new Error(`${call} in the init context: k6 allows it only in VU code (default, setup, teardown)`);
    return vu.host;
  };
  const drain = () => vu.samples.splice(0);
  /**
   * A sample's k6 tags that only the VU knows: its group (inside one) and the script's own
   * (strings, as k6 keeps them). The shard adds what it knows (scenario, a request's name,
   * url and method, its status): fewer bytes cross to it with every request.
   */
  const sampleTags = (own: Record<string, unknown> | undefined): Record<string, string> => {
    const tags: Record<string, string> = vu.group ? { group: vu.group } : {};
    for (const [k, v] of Object.entries(own ?? {})) tags[k] = String(v);
    return tags;
  };
  const loop = (vu.loop ??= new VuEventLoop());
  let responseCallback: readonly number[] | null = null;

  const k6 = {
    check(value: unknown, sets: Record<string, unknown>, tags?: Record<string, unknown>): boolean {
      let all = true;
      for (const [name, predicate] of Object.entries(sets ?? {})) {
        const passed = Boolean(typeof predicate === "function" ? predicate(value) : predicate);
        vu.samples.push({ type: "check", name, passed, tags: { ...sampleTags(tags), check: name } });
        all &&= passed;
      }
      return all;
    },
    async sleep(seconds: number): Promise<void> {
      await host("sleep()").sleep(drain(), Math.max(0, Number(seconds) || 0) * 1000);
    },
    async group<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
      if (typeof fn !== "function") throw new Error("group() needs a function as its second argument");
      // k6 joins nested group names with "::" and refuses a name that holds it.
      if (String(name).includes("::")) throw new Error(`group and check names may not contain '::' (got "${name}")`);
      const outer = vu.group ?? "";
      const path = `${outer}::${name}`;
      vu.group = path;
      const startedMs = Date.now();
      try {
        const result = await fn();
        // k6's group_duration, tagged with the group: a threshold may name it (k6-compat/options.ts).
        vu.samples.push({ type: "trend", name: GROUP_DURATION, value: Date.now() - startedMs, tags: { group: path } });
        return result;
      } finally {
        vu.group = outer;
      }
    },
    fail(message = ""): never {
      throw new Error(message);
    },
    randomSeed(_seed: number): void {
      // Math.random is the isolate's own, shared by its VUs: a seed would not make a VU's
      // sequence repeatable. Accepted so scripts run; documented as a no-op.
    },
  };

  async function request(method: string, url: unknown, body?: unknown, params: RequestParams = {}): Promise<K6Response> {
    const target = host(`http.${method.toLowerCase()}()`);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(params.headers ?? {})) headers[k] = String(v);
    const href = withoutCredentials(String(url), headers);
    let encoded: string | undefined;
    if (body !== undefined && body !== null) {
      if (typeof body === "string") encoded = body;
      else if (typeof body === "object" && !(body instanceof ArrayBuffer) && !ArrayBuffer.isView(body)) {
        encoded = formBody(body as Record<string, unknown>);
        if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = "application/x-www-form-urlencoded";
      } else {
        throw new Error(`http.${method.toLowerCase()}(): binary bodies are not supported by edgeload's k6 compat layer yet`);
      }
    }
    const jar = params.jar instanceof CookieJar ? params.jar : vu.jar;
    const given = Object.keys(headers).find((h) => h.toLowerCase() === "cookie");
    const cookie = jar.header(href, requestCookies(params.cookies), given === undefined ? undefined : headers[given]);
    if (given !== undefined) delete headers[given];
    if (cookie) headers.Cookie = cookie;
    const wire: WireRequest = {
      method: method.toUpperCase(),
      url: href,
      headers,
      ...(encoded !== undefined ? { body: encoded } : {}),
      expect: params.responseCallback !== undefined ? expectList(params.responseCallback) : responseCallback,
      readBody: params.responseType !== "none",
      ...redirectLimit(params.redirects, vu.maxRedirects),
      ...((params.tags?.step ?? params.tags?.name) ? { step: String(params.tags?.step ?? params.tags?.name) } : {}),
      ...tagsIfAny(sampleTags(params.tags)),
    };
    const response = await target.send(drain(), wire);
    return k6Response(wire, response, jar.receive(href, response.setCookies), parseHtml);
  }

  const http = {
    request: (method: string, url: unknown, body?: unknown, params?: RequestParams) => request(method, url, body, params),
    get: (url: unknown, params?: RequestParams) => request("GET", url, undefined, params),
    head: (url: unknown, params?: RequestParams) => request("HEAD", url, undefined, params),
    post: (url: unknown, body?: unknown, params?: RequestParams) => request("POST", url, body, params),
    put: (url: unknown, body?: unknown, params?: RequestParams) => request("PUT", url, body, params),
    patch: (url: unknown, body?: unknown, params?: RequestParams) => request("PATCH", url, body, params),
    del: (url: unknown, body?: unknown, params?: RequestParams) => request("DELETE", url, body, params),
    options: (url: unknown, body?: unknown, params?: RequestParams) => request("OPTIONS", url, body, params),
    asyncRequest: (method: string, url: unknown, body?: unknown, params?: RequestParams) => request(method, url, body, params),
    async batch(requests: unknown): Promise<unknown> {
      const one = (r: unknown) => {
        if (typeof r === "string") return request("GET", r);
        if (Array.isArray(r)) return request(String(r[0]), r[1], r[2], r[3] as RequestParams);
        const o = r as { method?: string; url: string; body?: unknown; params?: RequestParams };
        return request(o.method ?? "GET", o.url, o.body, o.params);
      };
      if (Array.isArray(requests)) return Promise.all(requests.map(one));
      const entries = Object.entries(requests as Record<string, unknown>);
      const responses = await Promise.all(entries.map(([, r]) => one(r)));
      return Object.fromEntries(entries.map(([k], i) => [k, responses[i]]));
    },
    expectedStatuses: (...statuses: Array<number | { min: number; max: number }>): ExpectedStatuses => ({ statuses }),
    setResponseCallback(callback: unknown): void {
      responseCallback = expectList(callback);
    },
    url: (strings: TemplateStringsArray, ...values: unknown[]) => strings.reduce((out, s, i) => out + s + (i < values.length ? String(values[i]) : ""), ""),
    file(): never {
      throw new Error("http.file() (multipart uploads) is not supported by edgeload's k6 compat layer yet");
    },
    /** The VU's own jar. */
    cookieJar: () => vu.jar,
    CookieJar,
  };

  const metric = (type: MetricType) =>
    class {
      readonly name: string;
      constructor(name: string, isTime = false) {
        if (!METRIC_NAME.test(String(name))) throw new Error(`invalid metric name "${name}": letters, digits and _, starting with a letter or _, at most 128`);
        this.name = name;
        vu.declare?.(name, type, Boolean(isTime));
      }
      add(value: unknown, tags?: Record<string, unknown>): boolean {
        if (!vu.host) throw new Error(`${this.name}.add() in the init context: k6 allows it only in VU code`);
        const n = Number(value);
        // A `type` tag is also kept as its own series (`name{type:…}`), the one tag edgeload's
        // custom metrics are split by (thresholds and summaries read it, as for built-in scenarios).
        // Every tag goes with the sample, for the sub-metrics thresholds name (core/metrics/sub-metrics.ts).
        const names = tags?.type === undefined ? [this.name] : [this.name, `${this.name}{type:${String(tags.type)}}`];
        const own = tagsIfAny(sampleTags(tags));
        names.forEach((name, i) => {
          const withTags = i === 0 ? own : {};
          if (type === "rate") vu.samples.push({ type, name, passed: typeof value === "boolean" ? value : n !== 0, ...withTags });
          else if (type === "counter") vu.samples.push({ type, name, value: n, ...withTags });
          else vu.samples.push({ type, name, value: n, ...withTags });
        });
        // k6's add() returns true once the sample is taken.
        return true;
      }
    };

  const data = {
    SharedArray: function SharedArray(name: string, build: () => unknown[]) {
      if (typeof build !== "function") throw new Error("SharedArray needs a name and a function that returns an array");
      let values = vu.shared.get(name);
      if (!values) {
        const built = build();
        if (!Array.isArray(built)) throw new Error(`SharedArray "${name}": the function must return an array`);
        values = Object.freeze(built.map((v) => Object.freeze(v)));
        vu.shared.set(name, values);
      }
      return values;
    },
  };

  // One object each, read through getters, so that `import { scenario } from "k6/execution"`
  // (bound once, when the VU's init context runs) reads the running iteration, as in k6.
  const execution = {
    vu: {
      get idInTest() {
        return vu.id;
      },
      get idInInstance() {
        return vu.id;
      },
      get iterationInInstance() {
        return vu.iteration;
      },
      get iterationInScenario() {
        return vu.iteration;
      },
      tags: {},
      metrics: { tags: {}, metadata: {} },
    },
    scenario: {
      get name() {
        return vu.scenario.name;
      },
      get executor() {
        return vu.scenario.executor;
      },
      get startTime() {
        return vu.scenario.startTimeMs;
      },
      progress: 0,
      get iterationInInstance() {
        return vu.iterationInTest;
      },
      get iterationInTest() {
        return vu.iterationInTest;
      },
    },
    instance: { iterationsCompleted: 0, iterationsInterrupted: 0, vusActive: 0, vusInitialized: 0, currentTestRunDuration: 0 },
    test: {
      abort(message?: unknown): never {
        // Kept on the VU, so an abort the script catches still stops the run (as in k6).
        vu.aborted = message === undefined ? "" : String(message);
        throw new Error(vu.aborted ? `test aborted: ${vu.aborted}` : "test aborted");
      },
      get options() {
        return {};
      },
    },
  };

  const wait = (ms: number) => host("a timer").sleep(drain(), ms);
  const socketModules: Record<string, Record<string, unknown>> = {};
  // Read when the script imports one: only then are k6's ws_* metrics declared (its summary shows them).
  const sockets = (name: "websockets" | "ws") => {
    if (!socketModules[name]) {
      for (const [metric, type] of Object.entries(SOCKET_METRICS)) vu.declare?.(metric, type, type === "trend");
      const deps = { host, loop: () => loop, drain, tags: sampleTags };
      socketModules[name] = name === "ws" ? createLegacyWs(deps, wait) : createWebSockets(deps);
    }
    return socketModules[name];
  };

  return {
    k6,
    "k6/http": http,
    "k6/metrics": { Counter: metric("counter"), Gauge: metric("gauge"), Rate: metric("rate"), Trend: metric("trend") },
    "k6/data": data,
    "k6/execution": execution,
    "k6/encoding": { b64encode, b64decode },
    "k6/crypto": crypto,
    // The bundle installs cheerio's parser (runtime/html.ts) when the script uses HTML.
    "k6/html": { parseHTML: parseHtml, install: (parser: HtmlParser) => void (htmlParser = parser) },
    "k6/timers": createTimers(() => loop, wait),
    get "k6/websockets"() {
      return sockets("websockets");
    },
    get "k6/experimental/websockets"() {
      return sockets("websockets");
    },
    get "k6/ws"() {
      return sockets("ws");
    },
    // Not a k6 module: the factory's `console` (bundle.ts), so console lines are the VU's.
    console: scriptConsole(vu),
  };
}

/** `{ tags }` when there are any: an untagged sample or request carries none. */
function tagsIfAny(tags: Record<string, string>): { tags?: Record<string, string> } {
  return Object.keys(tags).length ? { tags } : {};
}

interface RequestParams {
  readonly headers?: Record<string, unknown>;
  readonly tags?: Record<string, string>;
  readonly timeout?: string | number;
  readonly redirects?: number;
  readonly responseType?: "text" | "binary" | "none";
  readonly responseCallback?: unknown;
  readonly jar?: unknown;
  /** k6's per-request cookies (cookie-jar.ts requestCookies). */
  readonly cookies?: unknown;
}

interface ExpectedStatuses {
  readonly statuses: ReadonlyArray<number | { min: number; max: number }>;
}

/** The statuses of `http.expectedStatuses(…)` as a list (null: k6's default). */
function expectList(callback: unknown): readonly number[] | null {
  if (callback === null || callback === undefined) return null;
  const statuses = (callback as Partial<ExpectedStatuses>).statuses;
  if (!Array.isArray(statuses)) throw new Error("responseCallback must come from http.expectedStatuses(…)");
  const list: number[] = [];
  for (const s of statuses) {
    if (typeof s === "number") list.push(s);
    else for (let n = s.min; n <= s.max; n++) list.push(n);
  }
  return list;
}

/** `__k6seq`: forEach and map whose callbacks make requests run them one after another (async-transform.ts). */
export const sequence = {
  async forEach<T>(list: Iterable<T>, fn: (v: T, i: number, all: T[]) => unknown): Promise<void> {
    const all = [...list];
    for (let i = 0; i < all.length; i++) await fn(all[i]!, i, all);
  },
  async map<T, U>(list: Iterable<T>, fn: (v: T, i: number, all: T[]) => U | Promise<U>): Promise<U[]> {
    const all = [...list];
    const out: U[] = [];
    for (let i = 0; i < all.length; i++) out.push(await fn(all[i]!, i, all));
    return out;
  },
};
