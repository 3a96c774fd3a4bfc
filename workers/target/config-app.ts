/**
 * Configuration streaming under `/app/config`, for the example with thousands of
 * concurrent Server-Sent Events connections while an admin writes config changes. Mounted
 * by index.ts. The config and the open streams are in one Durable Object (config-hub.ts),
 * so a write through any isolate reaches every stream; this module checks the requests and
 * answers a stream request with the hub's own streaming response.
 *
 * | route | answer |
 * |---|---|
 * | `GET /app/config/stream` (`Accept: text/event-stream`) | 200 `text/event-stream`: `event: config` + `id: <version>` + `data: {"version":N,"values":{…}}` at once, then `event: change` + `id: <version>` + `data: {"version":N,"key":"…","value":…}` per write, `: ping` every `heartbeat` ms and `event: tick` + `data: {"n":k,"version":N}` every `interval` ms; 406 without the Accept; 400 on a bad knob |
 * | `PUT /app/config/:key` (admin bearer) `{"value": <any JSON>}` | 200 `{version, key}`, and a `change` event on every open stream; 401 without the bearer; 400 on a bad key or body |
 * | `GET /app/config` | 200 `{version, values}` |
 *
 * Stream knobs (query): `heartbeat` (ms, default 15000, 100–3600000), `interval` (ms,
 * 10–3600000; no ticks when absent), `ms` (delay before the response headers, i.e. the
 * time to open, 0–60000). Keys are 1–128 of `A-Za-z0-9_.:-`; values up to 16 KiB of JSON.
 */
import { Hono, type Context } from "hono";
import { requireAdmin } from "./admin-auth.ts";
import { configHub, streamRequest, type ConfigHub } from "./config-hub.ts";

export interface ConfigAppEnv {
  readonly CONFIG_HUB: DurableObjectNamespace<ConfigHub>;
  readonly ADMIN_API_SECRET?: string;
}

type App = { Bindings: ConfigAppEnv };
export const configApp = new Hono<App>();

const KEY = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_VALUE_BYTES = 16 * 1024;

/** A millisecond knob: absent → fallback; otherwise an integer in [min, max], or a problem. */
interface MsKnob {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly fallback: number | null;
}

const KNOBS = {
  heartbeat: { name: "heartbeat", min: 100, max: 3_600_000, fallback: 15_000 },
  interval: { name: "interval", min: 10, max: 3_600_000, fallback: null },
  ms: { name: "ms", min: 0, max: 60_000, fallback: 0 },
} as const satisfies Record<string, MsKnob>;

function msKnob(url: URL, knob: MsKnob, problems: string[]): number | null {
  const raw = url.searchParams.get(knob.name);
  if (raw === null) return knob.fallback;
  const n = Number(raw);
  if (raw === "" || !Number.isInteger(n) || n < knob.min || n > knob.max) {
    problems.push(`${knob.name}: an integer number of ms in ${knob.min}–${knob.max}`);
    return knob.fallback;
  }
  return n;
}

/** Whether the Accept header (RFC 9110 §12.5.1) lists text/event-stream with a non-zero q. */
function acceptsEventStream(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((range) => {
    const [type, ...params] = range.split(";").map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    return type === "text/event-stream" && (q === undefined || Number(q.slice(2)) > 0);
  });
}

configApp.get("/config/stream", async (c) => {
  if (!acceptsEventStream(c.req.header("accept"))) return c.json({ error: "this route answers only Accept: text/event-stream" }, 406);
  const url = new URL(c.req.url);
  const problems: string[] = [];
  const heartbeatMs = msKnob(url, KNOBS.heartbeat, problems)!;
  const intervalMs = msKnob(url, KNOBS.interval, problems);
  const delayMs = msKnob(url, KNOBS.ms, problems)!;
  if (problems.length) return c.json({ error: "bad stream parameters", problems }, 400);
  if (delayMs > 0) await scheduler.wait(delayMs);
  return configHub(c.env).fetch(streamRequest({ heartbeatMs, intervalMs }));
});

configApp.get("/config", async (c) => c.json(await configHub(c.env).snapshot()));

configApp.put("/config/:key", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const key = c.req.param("key");
  const value = await readValue(c);
  const problems = [...(KEY.test(key) ? [] : ["key: 1–128 characters of A-Za-z0-9 _ . : -"]), ...(value.ok ? [] : [value.problem])];
  if (problems.length || !value.ok) return c.json({ error: "bad config write", problems }, 400);
  return c.json(await configHub(c.env).set(key, value.value));
});

/** The `value` of a `{"value": …}` body, at most MAX_VALUE_BYTES of JSON. */
async function readValue(c: Context<App>): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return { ok: false, problem: 'body: a JSON object {"value": <any JSON>}' };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body) || !("value" in body)) {
    return { ok: false, problem: 'body: a JSON object {"value": <any JSON>}' };
  }
  const value = (body as { value: unknown }).value;
  if (new TextEncoder().encode(JSON.stringify(value)).byteLength > MAX_VALUE_BYTES)
    return { ok: false, problem: `value: at most ${MAX_VALUE_BYTES} bytes of JSON` };
  return { ok: true, value };
}
