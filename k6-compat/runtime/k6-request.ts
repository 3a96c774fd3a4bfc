/**
 * The request a k6/http call sends, built as k6 v1.8.1 builds it (js/modules/k6/http/request.go
 * over Go's net/http), so a target sees what k6 would send: the body as bytes (a Worker's fetch
 * would label a string `text/plain;charset=UTF-8`), header names in Go's canonical form, k6's
 * User-Agent, the script's Cookie header then its `params.cookies` then the jar's; and what
 * `res.request` shows of it, in k6's shape (headers as lists of values, the cookies sent).
 */
import type { CookieJar, RequestCookies } from "./cookie-jar.ts";
import { requestCookies } from "./cookie-jar.ts";
import { holdsFile, multipartBody } from "./multipart.ts";
import { canonicalHeaderKey, formBody, withoutCredentials } from "./request-encoding.ts";

/** k6 v1.8.1's User-Agent (internal/cmd/options.go: `Grafana k6/<version>`), unless options.userAgent or a header sets one. */
export const K6_USER_AGENT = "Grafana k6/1.8.1";

/** A cookie as `res.request.cookies` lists it. */
export interface SentCookie {
  readonly name: string;
  readonly value: string;
  readonly replace: boolean;
}

/** `res.request`, as k6 gives it: Go's http.Header (name → values) and the body as a string. */
export interface ShownRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string[]>;
  readonly body: string;
  readonly cookies: Record<string, SentCookie[]>;
}

export interface K6Request {
  /** The URL sent: without credentials, which go as Basic authorization. */
  readonly url: string;
  /** The headers sent, by canonical name. */
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array;
  readonly shown: ShownRequest;
  /** The request's `params.cookies`: each redirect hop sends them again, before the jar's. */
  readonly own: RequestCookies;
}

export interface RequestInput {
  readonly method: string;
  readonly url: unknown;
  readonly body: unknown;
  readonly headers?: Record<string, unknown>;
  readonly cookies?: unknown;
  readonly jar: CookieJar;
  /** options.userAgent, else k6's; "" sends none, as Go sends none for an empty User-Agent. */
  readonly userAgent: string;
  /** k6's params.auth: "digest" sends the URL's credentials only to answer a challenge (digest-auth.ts), never as Basic. */
  readonly auth?: string;
}

/** Builds one k6 request; `call` (`http.post()`) names it in an error. */
export function k6Request(input: RequestInput, call: string): K6Request {
  // http.Header: Set replaces under the canonical name, so the last of `x-a` and `X-A` wins, as in Go.
  const headers: Record<string, string> = {};
  const set = (name: string, value: string) => (headers[canonicalHeaderKey(name)] = value);
  const given = requestBody(input.body, call, set);
  // An empty body on a GET or HEAD is none to Go (it probes the body and sends nothing); fetch
  // refuses any body on them, so it is not handed one.
  const body = given?.length === 0 && (input.method === "GET" || input.method === "HEAD") ? undefined : given;
  set("User-Agent", input.userAgent);
  for (const [name, value] of Object.entries(input.headers ?? {})) set(name, String(value));
  // k6 drops a Content-Length the script gives: Go sets it from the body.
  delete headers["Content-Length"];
  const own = requestCookies(input.cookies);
  // Go adds a URL's credentials as Basic authorization when it sends, not to res.request's headers.
  const credentials: Record<string, string> = {};
  const url = withoutCredentials(String(input.url), credentials);
  const cookie = input.jar.header(url, own, headers.Cookie);
  if (cookie) headers.Cookie = cookie;
  else delete headers.Cookie;
  const sent: Record<string, string> = { ...headers };
  // A Worker's fetch takes the Host from the URL; Go sends no User-Agent when it is empty.
  delete sent.Host;
  if (sent["User-Agent"] === "") delete sent["User-Agent"];
  if (credentials.Authorization !== undefined && sent.Authorization === undefined && input.auth !== "digest") sent.Authorization = credentials.Authorization;
  const shown: ShownRequest = {
    method: input.method,
    url,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    body: body ? new TextDecoder().decode(body) : "",
    cookies: sentCookies(cookie),
  };
  return { url, headers: sent, ...(body ? { body } : {}), shown, own };
}

/**
 * The body's bytes, as k6 takes them: a string as UTF-8, an ArrayBuffer (or a view of one) as
 * it is, an object as a form with its Content-Type (multipart when a field is an `http.file()`);
 * undefined for none.
 */
function requestBody(body: unknown, call: string, set: (name: string, value: string) => void): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  if (typeof body === "object" && !Array.isArray(body) && holdsFile(body as Record<string, unknown>)) {
    const { body: bytes, contentType } = multipartBody(body as Record<string, unknown>);
    set("Content-Type", contentType);
    return bytes;
  }
  if (typeof body === "object" && !Array.isArray(body)) {
    set("Content-Type", "application/x-www-form-urlencoded");
    return new TextEncoder().encode(formBody(body as Record<string, unknown>));
  }
  throw new TypeError(`${call}: a body is a string, an object (sent as a form) or an ArrayBuffer, not ${Array.isArray(body) ? "an array" : typeof body}`);
}

/** `res.request.cookies`: the Cookie header sent, by name. */
function sentCookies(header: string | null): Record<string, SentCookie[]> {
  const out: Record<string, SentCookie[]> = {};
  for (const pair of header ? header.split("; ") : []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    const name = pair.slice(0, eq);
    (out[name] ??= []).push({ name, value: pair.slice(eq + 1), replace: false });
  }
  return out;
}
