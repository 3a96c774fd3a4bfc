/**
 * The metrics of a page's requests as k6's browser module records them
 * (browser_http_req_duration, browser_http_req_failed, with url, method and status tags), and
 * k6's grouping of a page's metrics by page.on("metric") rules (browser-host.ts applies it to
 * every sample of the page, web vitals too).
 */
import type { Request } from "@cloudflare/playwright";
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
