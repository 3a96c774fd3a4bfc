/**
 * `GET /metrics`: the target's own series in the Prometheus text exposition format
 * (prometheus.ts), for examples that scrape the system under test while they load it.
 * Only numbers the target really has:
 *
 * | series | type | source |
 * |---|---|---|
 * | `target_requests_total{route, method, code}` | counter | this isolate's requests, by matched route pattern (`/*`: the knobs) |
 * | `target_request_duration_seconds{route, method}` | histogram | the same requests, until the response was returned |
 * | `target_config_version` | gauge | the ConfigHub's config version |
 * | `target_config_writes_total` | counter | config writes since the ConfigHub started |
 * | `target_sse_streams_open` | gauge | streams the ConfigHub holds open now |
 * | `target_records_cache_lookups_total{result}` | counter | this isolate's v2 record reads: `hit`, `coalesced`, `miss` |
 * | `target_event_loop_lag_seconds` | gauge | the delay of a 0 ms timer, measured during the scrape |
 *
 * Isolate-local: request counts, durations and cache lookups are kept in module state, so
 * each isolate reports its own and starts from zero when it starts (Prometheus treats that
 * as a counter reset). The local target runs one isolate; a deployed Worker runs many, and
 * a scrape reaches one of them. The config series come from the one ConfigHub object.
 *
 * Time in a Worker advances only on I/O (a Spectre mitigation): durations count the time
 * spent waiting on D1, Durable Objects and timers, not CPU time between them, and the
 * event-loop lag shows how late a timer fired, which is 0 unless the isolate was busy with
 * other requests. A Worker cannot see its own CPU time or memory, so the `process_*`
 * series real services expose (process_cpu_seconds_total, process_resident_memory_bytes)
 * are not served here; scrapers take any series name, so specs can name them for real
 * services.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { configHub, type ConfigHub } from "./config-hub.ts";
import { EXPOSITION_CONTENT_TYPE, Histogram, renderExposition, type MetricFamily } from "./prometheus.ts";
import { v2Cache } from "./records.ts";

export interface MetricsEnv {
  readonly CONFIG_HUB: DurableObjectNamespace<ConfigHub>;
}

/** Requests of this isolate by `route method code`, and durations by `route method`. */
const requestCounts = new Map<string, { readonly route: string; readonly method: string; readonly code: string; count: number }>();
const requestDurations = new Map<string, { readonly route: string; readonly method: string; readonly histogram: Histogram }>();

/**
 * Middleware counting every request under the route pattern that answered it (e.g.
 * `/app/v1/records/:key`, bounded however many keys there are); `/*` is the knobs catch-all.
 */
export const countRequests: MiddlewareHandler = async (c, next) => {
  const startedMs = Date.now();
  await next();
  const durationS = (Date.now() - startedMs) / 1000;
  // After next(), the route index points at the handler that answered.
  const route = routePath(c);
  const method = c.req.method;
  const code = String(c.res.status);
  const countKey = `${route} ${method} ${code}`;
  const counted = requestCounts.get(countKey) ?? { route, method, code, count: 0 };
  counted.count++;
  requestCounts.set(countKey, counted);
  const durationKey = `${route} ${method}`;
  const timed = requestDurations.get(durationKey) ?? { route, method, histogram: new Histogram() };
  timed.histogram.observe(durationS);
  requestDurations.set(durationKey, timed);
};

/** How late a 0 ms timer fires: the isolate's event-loop lag, as far as Worker time shows it. */
async function eventLoopLagS(): Promise<number> {
  const startMs = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 0));
  return (Date.now() - startMs) / 1000;
}

export const metricsApp = new Hono<{ Bindings: MetricsEnv }>();

metricsApp.get("/metrics", async (c) => {
  const [hub, lagS] = await Promise.all([configHub(c.env).stats(), eventLoopLagS()]);
  const families: MetricFamily[] = [
    {
      name: "target_requests_total",
      help: "Requests answered by this isolate, by route pattern, method and status code (isolate-local, from isolate start).",
      type: "counter",
      samples: [...requestCounts.values()].map(({ route, method, code, count }) => ({ labels: { route, method, code }, value: count })),
    },
    {
      name: "target_request_duration_seconds",
      help: "Time until the response was returned, by route pattern and method (isolate-local; Worker time advances on I/O only).",
      type: "histogram",
      samples: [...requestDurations.values()].flatMap(({ route, method, histogram }) => histogram.samples({ route, method })),
    },
    {
      name: "target_config_version",
      help: "Version of the config (number of writes ever made).",
      type: "gauge",
      samples: [{ labels: {}, value: hub.version }],
    },
    {
      name: "target_config_writes_total",
      help: "Config writes accepted since the ConfigHub object started.",
      type: "counter",
      samples: [{ labels: {}, value: hub.writesTotal }],
    },
    {
      name: "target_sse_streams_open",
      help: "Server-Sent Events streams of /app/config/stream open now (held by the ConfigHub).",
      type: "gauge",
      samples: [{ labels: {}, value: hub.streamsOpen }],
    },
    {
      name: "target_records_cache_lookups_total",
      help: "Reads of /app/v2/records by how they were answered (isolate-local).",
      type: "counter",
      samples: Object.entries(v2Cache.lookups).map(([result, value]) => ({ labels: { result }, value })),
    },
    {
      name: "target_event_loop_lag_seconds",
      help: "Delay of a 0 ms timer measured during this scrape (Worker time advances on I/O only).",
      type: "gauge",
      samples: [{ labels: {}, value: lagS }],
    },
  ];
  return c.body(renderExposition(families), 200, { "content-type": EXPOSITION_CONTENT_TYPE, "cache-control": "no-store" });
});
