/**
 * The colo a deployed shard runs in, as it observes it (placement by location hint is
 * best effort): read from a Cloudflare zone's /cdn-cgi/trace and parsed by
 * core/formats/cdn-cgi-trace.ts. A local shard does not ask: its colo is `local`.
 */
import { coloFromTrace } from "../../core/formats/cdn-cgi-trace.ts";
import { outboundFetch } from "../outbound/outbound-fetch.ts";
import { onlyOrigin } from "../outbound/policies.ts";

/** Any Cloudflare zone's trace reports the colo that served it. */
const CLOUDFLARE_TRACE_URL = "https://cloudflare.com/cdn-cgi/trace";

/**
 * The colo this object runs in, or "unknown" when the trace cannot be read within 3 s.
 * `traceUrl` (COLO_TRACE_URL) overrides the zone: the deploy test points it at loopback.
 */
export async function observeColo(traceUrl: string | undefined): Promise<string> {
  try {
    const url = traceUrl ?? CLOUDFLARE_TRACE_URL;
    const text = await (await outboundFetch(onlyOrigin(url))(url, { signal: AbortSignal.timeout(3_000) })).text();
    return coloFromTrace(text);
  } catch {
    return "unknown";
  }
}
