/**
 * What a k6 request returns: k6's Response over what the shard's engine answered (status,
 * body, headers in Go's canonical form, error and error_code, timings, cookies), with
 * `json()` and its gjson-like selector, and `html()` over k6/html.
 */
import type { WireResponse } from "./wire.ts";
import type { ResponseCookie } from "./cookie-jar.ts";
import type { ShownRequest } from "./k6-request.ts";
import type { parseHTML } from "./html.ts";

export interface K6Response {
  readonly status: number;
  readonly body: string | null;
  readonly headers: Record<string, string>;
  readonly url: string;
  readonly error: string;
  readonly error_code: number;
  readonly timings: Readonly<Record<string, number>>;
  readonly cookies: Record<string, ResponseCookie[]>;
  /** What was sent, as k6 shows it (k6-request.ts). */
  readonly request: ShownRequest;
  json(selector?: string): unknown;
  /** k6's `res.html(selector?)`: the body as a Selection (runtime/html.ts), `find(selector)` of it when given. */
  html(selector?: string): unknown;
}

/** k6's error codes for what the engine reports (k6's docs: "Error codes"). */
const ERROR_CODES = { timeout: 1050, connection: 1200 } as const;

/** A failed request's `res.error` ("" when it got a response): k6's "request timeout" for a timeout. */
export function failureText(r: WireResponse): string {
  if (!r.error) return "";
  return r.errorDetail ?? (r.error === "timeout" ? "request timeout" : "connection error");
}

/** k6/html's parseHTML, as the bundle installs it: the runtime does not carry it (bundle.ts). */
export type HtmlParser = typeof parseHTML;

export function k6Response(request: ShownRequest, r: WireResponse, cookies: Record<string, ResponseCookie[]>, parseHtml: HtmlParser): K6Response {
  const headers: Record<string, string> = {};
  // k6 shows header names in canonical form (Content-Type), as Go's net/http does.
  for (const [k, v] of Object.entries(r.headers)) headers[k.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase())] = v;
  let parsed: unknown;
  let parsedOnce = false;
  return {
    status: r.status,
    body: r.body,
    headers,
    url: r.url ?? request.url,
    error: failureText(r),
    error_code: r.error ? ERROR_CODES[r.error] : 0,
    cookies,
    timings: { duration: r.durationMs, waiting: r.durationMs, sending: 0, receiving: 0, blocked: 0, connecting: 0, tls_handshaking: 0 },
    request,
    json(selector?: string): unknown {
      if (!parsedOnce) {
        if (r.body === null) throw new Error("the response has no body (responseType none, or the request failed)");
        parsed = JSON.parse(r.body);
        parsedOnce = true;
      }
      return selector === undefined ? parsed : select(parsed, selector);
    },
    html(selector?: string): unknown {
      if (r.body === null) throw new Error("res.html(): the response has no body (responseType none, or the request failed)");
      const document = parseHtml(r.body);
      return selector === undefined ? document : document.find(selector);
    },
  };
}

/** The common part of k6's gjson selectors: `a.b.0.c` (a missing path gives undefined). */
function select(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split(".")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
