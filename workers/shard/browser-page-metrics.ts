/**
 * The metrics of a page's requests as k6's browser module records them
 * (browser_http_req_duration, browser_http_req_failed, browser_data_sent and
 * browser_data_received, with url, method and status tags), and k6's grouping of a page's
 * metrics by page.on("metric") rules (browser-host.ts applies it to every sample of the page,
 * web vitals too).
 *
 * The bytes are counted as k6 counts them (k6 v1.x common/http.go Request.Size, Response.Size;
 * network_manager.go emitRequestMetrics, emitResponseMetrics): a request's line and headers
 * (`METHOD /path HTTP/1.1`, a `name: value` line per value, the raw headers Chromium sent when
 * it tells them) and its post data; a response's status line and headers and its body decoded,
 * none for a redirect. k6 reads each body back from the browser to measure it; here the
 * decoded lengths of the chunks Chromium reports as they arrive (CDP Network.dataReceived) are
 * summed, so no body crosses the shard's connection twice. Playwright's Request.sizes() would
 * give the body as it came over the wire, compressed (a gzipped 50 kB page is 200 bytes).
 */
import type { CDPSession, Request } from "@cloudflare/playwright";
import type { CrossingRegExp, MetricTagRule } from "../../k6-compat/runtime/browser-wire.ts";
import type { Sample } from "../../k6-compat/runtime/wire.ts";

/** k6's browser_http_req_duration and _failed of a request that got an answer. */
export async function requestFinished(request: Request, record: (samples: readonly Sample[]) => void): Promise<void> {
  const response = await request.response().catch(() => null);
  const status = response?.status() ?? 0;
  const timing = request.timing();
  // From the request's start to its response's end.
  const durationMs = timing.responseEnd >= 0 ? timing.responseEnd : null;
  recordRequest(request, durationMs, status < 200 || status > 399, status, record);
}

export function recordRequest(
  request: Request,
  durationMs: number | null,
  failed: boolean,
  status: number,
  record: (samples: readonly Sample[]) => void,
): void {
  if (!/^https?:/.test(request.url())) return;
  const tags = { url: request.url(), method: request.method(), status: String(status) };
  const samples: Sample[] = [{ type: "rate", name: "browser_http_req_failed", passed: failed, tags }];
  if (durationMs !== null) samples.push({ type: "trend", name: "browser_http_req_duration", value: durationMs, tags });
  record(samples);
}

/**
 * `sample` with k6's grouping by page.on("metric") (k6 v1.x handleURLTag): the last rule with
 * a match for its url (and method: a web vital's is GET) gives its name to the url and name
 * tags; within a rule, its first match decides.
 */
export function taggedByRules(sample: Sample, rules: readonly MetricTagRule[]): Sample {
  const tags = (sample as { tags?: Record<string, string> }).tags;
  if (!tags?.url) return sample;
  const method = tags.method ?? "GET";
  let name: string | null = null;
  for (const rule of rules) {
    const matched = rule.matches.some((m) => (m.method === undefined || m.method === method) && urlPattern(m.url).test(tags.url!));
    if (matched) name = rule.name;
  }
  return name === null ? sample : ({ ...sample, tags: { ...tags, url: name, name } } as Sample);
}

const urlPattern = (url: CrossingRegExp | string) => (typeof url === "string" ? new RegExp(url) : new RegExp(url.$regexp, url.flags));

type Headers = Readonly<Record<string, string>>;
/** What is read of CDP's Network.Response and Network.Request (their types are not exported by @cloudflare/playwright). */
interface CdpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
}
interface CdpRequest {
  readonly postData?: string;
  readonly postDataEntries?: readonly { readonly bytes?: string }[];
}

/** What is known of a request in flight, by its CDP id (a redirect's hops share one). */
interface InFlight {
  url: string;
  method: string;
  headers: Headers;
  postBytes: number;
  response: CdpResponse | null;
  bodyBytes: number;
}

/** Records a page's browser_data_sent and browser_data_received (see the header), from its CDP session's Network events. */
export async function watchPageBytes(cdp: CDPSession, record: (samples: readonly Sample[]) => void): Promise<void> {
  const inFlight = new Map<string, InFlight>();
  // Raw headers come in events of their own, before or after the request's (CDP's ExtraInfo events).
  const rawRequest = new Map<string, Headers>();
  const rawResponse = new Map<string, Headers>();
  const finish = (id: string, response: CdpResponse | null, sent: boolean) => {
    const request = inFlight.get(id);
    inFlight.delete(id);
    if (!request || !/^https?:/.test(request.url)) return;
    const samples: Sample[] = [];
    const tags = { url: request.url, method: request.method };
    if (sent) {
      const value = requestHeadersBytes(request, rawRequest.get(id) ?? request.headers) + request.postBytes;
      samples.push({ type: "counter", name: "browser_data_sent", value, tags });
    }
    if (response) {
      const redirect = response.status >= 300 && response.status <= 399;
      const value = responseHeadersBytes(response, rawResponse.get(id) ?? response.headers) + (redirect ? 0 : request.bodyBytes);
      samples.push({ type: "counter", name: "browser_data_received", value, tags: { ...tags, status: String(response.status) } });
    }
    rawRequest.delete(id);
    rawResponse.delete(id);
    if (samples.length) record(samples);
  };
  cdp.on("Network.requestWillBeSent", (e) => {
    // A redirect's next hop: the hop before it ends with the redirect's response.
    if (e.redirectResponse) finish(e.requestId, e.redirectResponse, true);
    const { url, method, headers } = e.request;
    inFlight.set(e.requestId, { url, method, headers, postBytes: postDataBytes(e.request), response: null, bodyBytes: 0 });
  });
  cdp.on("Network.requestWillBeSentExtraInfo", (e) => void rawRequest.set(e.requestId, e.headers));
  cdp.on("Network.responseReceived", (e) => {
    const request = inFlight.get(e.requestId);
    if (request) request.response = e.response;
  });
  cdp.on("Network.responseReceivedExtraInfo", (e) => void rawResponse.set(e.requestId, e.headers));
  cdp.on("Network.dataReceived", (e) => {
    const request = inFlight.get(e.requestId);
    if (request) request.bodyBytes += e.dataLength;
  });
  cdp.on("Network.loadingFinished", (e) => finish(e.requestId, inFlight.get(e.requestId)?.response ?? null, true));
  // A request the shard refused (the deployment's allowed targets) was never sent.
  cdp.on("Network.loadingFailed", (e) => finish(e.requestId, null, e.blockedReason === undefined && e.errorText !== "net::ERR_BLOCKED_BY_CLIENT"));
  await cdp.send("Network.enable");
}

/** `name: value\r\n` of each header value (CDP joins a header's values with newlines). */
function headerLinesBytes(headers: Headers): number {
  let size = 0;
  for (const [name, values] of Object.entries(headers)) for (const value of values.split("\n")) size += name.length + value.length + 4;
  return size;
}

/** k6's Request.headersSize: `METHOD /path HTTP/1.1\r\n` (the path without its query) and the header lines. */
function requestHeadersBytes(request: InFlight, headers: Headers): number {
  let path = "";
  try {
    path = new URL(request.url).pathname;
  } catch {}
  return 4 + request.method.length + path.length + 8 + headerLinesBytes(headers);
}

/** k6's Response.headersSize: `HTTP/1.1 200 OK\r\n`, the header lines and the blank line. */
const responseHeadersBytes = (response: CdpResponse, headers: Headers) => 4 + 8 + 3 + response.statusText.length + headerLinesBytes(headers) + 2;

/** A request's post data in bytes: its entries' (base64) when Chromium gives them, else its text's UTF-8. */
function postDataBytes(request: CdpRequest): number {
  if (request.postDataEntries?.length) return request.postDataEntries.reduce((sum, entry) => sum + base64Bytes(entry.bytes ?? ""), 0);
  return request.postData ? new TextEncoder().encode(request.postData).length : 0;
}

const base64Bytes = (b64: string) => Math.floor((b64.length * 3) / 4) - (b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0);
