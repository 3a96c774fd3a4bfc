/**
 * The target's deterministic knobs for tests and benchmarks. Every path that is not an
 * OIDC or admin route accepts the same query parameters, so `/delay?ms=20` and
 * `/api?status=503` work:
 *
 *   ms=N        wait N ms before answering (setTimeout; headers and body come together)
 *   jitter=N    add a uniform 0..N ms to the wait
 *   status=N    answer with status N (default 200)
 *   size=N      response body of N bytes (default: a small JSON document)
 *   fail=R      fraction 0..1 of requests answered with failStatus (default 500); the
 *               failures are spread evenly (every 1/R-th request), not drawn at random
 *   maxRps=N    serve at most N requests per wall-clock second; the rest of that second
 *               are answered 503 at once (with `retry-after: 1`), before any other knob,
 *               so capacity ladders have a known limit to find. Every request carrying
 *               maxRps counts, whatever its path or N. The count is per isolate: the local
 *               target runs in one, a deployed Worker in many (each with its own count)
 *   redirect=U  answer 302 with `Location: U` (after the wait), to test how a client
 *               follows redirects
 *
 * GET /healthz answers 200 at once.
 */

let served = 0;

/** Requests carrying `maxRps` seen in the current wall-clock second of this isolate. */
const thisSecond = { second: 0, count: 0 };

/** Whether this request is over `maxRps` in its second (it is counted either way). */
function overMaxRps(url: URL, nowMs: number): boolean {
  if (!url.searchParams.has("maxRps")) return false;
  const second = Math.floor(nowMs / 1000);
  if (second !== thisSecond.second) Object.assign(thisSecond, { second, count: 0 });
  thisSecond.count++;
  return thisSecond.count > numberParam(url, "maxRps", Infinity);
}

function numberParam(url: URL, name: string, fallback: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

function body(size: number | null, fields: Record<string, unknown>): string {
  if (size === null) return JSON.stringify(fields);
  return "x".repeat(Math.min(size, 16 * 1024 * 1024));
}

export async function knobs(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/healthz") return new Response("ok");
  if (overMaxRps(url, Date.now())) {
    return new Response(JSON.stringify({ ok: false, error: "over maxRps" }), {
      status: 503,
      headers: { "content-type": "application/json", "retry-after": "1" },
    });
  }
  const n = served++;
  const waitMs = numberParam(url, "ms", 0) + Math.random() * numberParam(url, "jitter", 0);
  const failRate = Math.min(1, numberParam(url, "fail", 0));
  // Request n fails when the cumulative failure count steps up: exactly rate × n overall.
  const fails = failRate > 0 && Math.floor((n + 1) * failRate) > Math.floor(n * failRate);
  const status = fails ? numberParam(url, "failStatus", 500) : numberParam(url, "status", 200);
  if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  const location = url.searchParams.get("redirect");
  if (location) return new Response(null, { status: 302, headers: { location } });
  const size = url.searchParams.has("size") ? numberParam(url, "size", 0) : null;
  const text = body(size, { ok: !fails, path: url.pathname, n, waitedMs: Math.round(waitMs) });
  return new Response(status === 204 || status === 304 ? null : text, {
    status,
    headers: { "content-type": size === null ? "application/json" : "text/plain" },
  });
}
