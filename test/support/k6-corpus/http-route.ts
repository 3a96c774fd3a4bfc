/**
 * What a look-alike route of the corpus targets is (targets.ts and the services it hosts:
 * crocodiles.ts, test-k6-site.ts): a path pattern and a handler given the request, its URL and
 * its body, with the answers they share (JSON, text, a form or JSON body read the way a
 * Django or PHP service reads it).
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export type Handler = (req: IncomingMessage, url: URL, body: Buffer, res: ServerResponse) => void | Promise<void>;
export type Route = readonly [RegExp, Handler];

export const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string | string[]> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
};

export const text = (res: ServerResponse, status: number, body: string, type = "text/plain", headers: Record<string, string | string[]> = {}) => {
  res.writeHead(status, { "content-type": type, ...headers });
  res.end(body);
};

/** A request body's fields: JSON when it says so, a URL-encoded form otherwise (what k6 sends for an object body). */
export function fields(req: IncomingMessage, body: Buffer): Record<string, string> {
  const raw = body.toString("utf8");
  if ((req.headers["content-type"] ?? "").includes("application/json")) {
    try {
      const parsed = JSON.parse(raw) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

/** The request's cookies by name (RFC 6265 §5.4's `name=value; name=value`). */
export function cookies(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (req.headers.cookie ?? "").split(";")) {
    const at = pair.indexOf("=");
    if (at > 0) out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return out;
}
