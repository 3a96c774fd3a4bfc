/**
 * k6/http for one VU: every request is built as k6 builds it (../k6-request.ts) and leaves
 * through the iteration's host (the shard's engine sends and times it) with the samples
 * recorded so far, its expected statuses and a hook that keeps each redirect's cookies in the
 * VU's jar; the answer comes back as k6's response object (../k6-response.ts).
 */
import { CookieJar } from "../cookie-jar.ts";
import { digestAuthorization, digestChallenge, userOf } from "../digest-auth.ts";
import { K6_USER_AGENT, k6Request } from "../k6-request.ts";
import { httpFile } from "../multipart.ts";
import { failureText, k6Response, type HtmlParser, type K6Response } from "../k6-response.ts";
import { redirectLimit } from "../redirect-limit.ts";
import type { RedirectHop, WireRequest, WireResponse } from "../wire.ts";
import { requestThrows, requestTimeoutMs } from "../vu-options.ts";
import { tagsIfAny, type VuScope } from "./context.ts";

interface RequestParams {
  readonly headers?: Record<string, unknown>;
  readonly tags?: Record<string, string>;
  /** k6's per-request timeout (vu-options.ts requestTimeoutMs). */
  readonly timeout?: string | number;
  /** k6's per-request `throw`, over options.throw. */
  readonly throw?: boolean;
  readonly redirects?: number;
  readonly responseType?: "text" | "binary" | "none";
  readonly responseCallback?: unknown;
  readonly jar?: unknown;
  /** k6's per-request cookies (cookie-jar.ts requestCookies). */
  readonly cookies?: unknown;
  /** k6's `auth`: "digest" (../digest-auth.ts); Basic comes from the URL's credentials anyway. */
  readonly auth?: string;
}

interface ExpectedStatuses {
  readonly statuses: ReadonlyArray<number | { min: number; max: number }>;
}

/** `parseHtml`: what res.html() parses with (html.ts). */
export function createHttp(scope: VuScope, parseHtml: HtmlParser) {
  const { vu } = scope;
  /** http.setResponseCallback's statuses, the default of every request that names none. */
  let responseCallback: readonly number[] | null = null;
  const request = (method: string, url: unknown, body?: unknown, params: RequestParams = {}): Promise<K6Response> =>
    send(scope, parseHtml, responseCallback, method, url, body, params);

  return {
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
    file: (data: unknown, filename?: string, contentType?: string) => httpFile(data, filename, contentType),
    /** The VU's own jar. */
    cookieJar: () => vu.jar,
    CookieJar,
  };
}

/** One request: built as k6 builds it (k6-request.ts), sent through the host, read back as k6's response. */
async function send(
  { vu, host, drain, tags }: VuScope,
  parseHtml: HtmlParser,
  responseCallback: readonly number[] | null,
  method: string,
  url: unknown,
  body: unknown,
  params: RequestParams,
): Promise<K6Response> {
  const call = `http.${method.toLowerCase()}()`;
  const target = host(call);
  const timeoutMs = requestTimeoutMs(params.timeout);
  const jar = params.jar instanceof CookieJar ? params.jar : vu.jar;
  const userAgent = vu.userAgent ?? K6_USER_AGENT;
  const built = k6Request(
    { method: method.toUpperCase(), url, body, jar, userAgent, headers: params.headers, cookies: params.cookies, auth: params.auth },
    call,
  );
  const wire: WireRequest = {
    method: built.shown.method,
    url: built.url,
    headers: built.headers,
    ...(built.body !== undefined ? { body: built.body } : {}),
    expect: params.responseCallback !== undefined ? expectList(params.responseCallback) : responseCallback,
    // As k6: discardResponseBodies makes "none" the default, and a request's own responseType wins.
    readBody: (params.responseType ?? (vu.discardsBodies ? "none" : "text")) !== "none",
    ...redirectLimit(params.redirects, vu.maxRedirects),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...((params.tags?.step ?? params.tags?.name) ? { step: String(params.tags?.step ?? params.tags?.name) } : {}),
    ...tagsIfAny(tags(params.tags)),
  };
  // Each redirect followed: its cookies into the jar, the next hop's Cookie from it, as k6's
  // CheckRedirect does (lib/netext/httpext/request.go). A request that follows none needs no hook.
  const redirectCookies =
    wire.maxRedirects === 0
      ? undefined
      : ({ fromUrl, setCookies, toUrl }: RedirectHop) => {
          jar.receive(fromUrl, setCookies);
          return jar.header(toUrl, built.own);
        };
  // options.rps: the request waits its turn once built and before it is timed, as in k6
  // (lib/netext/httpext/request.go); the wait is the shard's sleep, so a stopping run cuts it.
  const waitMs = vu.rpsLimit?.reserve() ?? 0;
  if (waitMs > 0) await target.sleep(drain(), waitMs);
  let response = await target.send(drain(), wire, redirectCookies);
  const answer = params.auth === "digest" ? digestAnswer(String(url), wire, response) : null;
  if (answer) response = await target.send(drain(), { ...wire, headers: { ...wire.headers, Authorization: answer } }, redirectCookies);
  // k6's `throw`: a request that got no response (a timeout, a refused connection) throws, its
  // metrics already recorded; a response of any status does not (js/modules/k6/http/request.go).
  if (response.error && requestThrows(params.throw, vu.throws ?? false)) throw new Error(failureMessage(wire, response));
  // The response's cookies belong to the URL it came from, after its redirects.
  return k6Response(built.shown, response, jar.receive(response.url ?? built.url, response.setCookies), parseHtml);
}

/** The Authorization answering a 401's Digest challenge with the URL's credentials, or null when there is none to answer. */
function digestAnswer(url: string, wire: WireRequest, response: WireResponse): string | null {
  const user = userOf(url);
  const challenge = response.status === 401 ? digestChallenge(headerOf(response.headers, "www-authenticate")) : null;
  if (!user || !challenge) return null;
  const sent = new URL(wire.url);
  const cnonce = [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return digestAuthorization(challenge, user, wire.method, sent.pathname + sent.search, cnonce);
}

const headerOf = (headers: Readonly<Record<string, string>>, name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];

/** What k6 throws for a request that got no response: Go's `Get "url": reason`, with k6's words for a timeout. */
function failureMessage(request: WireRequest, response: WireResponse): string {
  const method = request.method.charAt(0) + request.method.slice(1).toLowerCase();
  return `${method} "${request.url}": ${failureText(response)}`;
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
