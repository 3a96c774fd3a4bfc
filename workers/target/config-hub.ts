/**
 * ConfigHub: the configuration behind `/app/config` (config-app.ts) and the hub of every
 * open Server-Sent Events stream on it. One SQLite-backed Durable Object by name
 * (`configHub(env)`), so a write made through any isolate reaches every stream, wherever
 * its connection landed.
 *
 * The config lives in the object's storage (`config_values`); the open streams live in
 * memory as the writers of TransformStreams whose readable sides went back to the Worker
 * as the bodies of `fetch()` responses. A write bumps the version and writes one event to
 * every writer. A client that goes away cancels its body; the cancellation reaches the
 * writer (its `closed` rejects, its writes fail) and the stream is dropped. Why fetch and
 * not an RPC method returning the ReadableStream, which workerd also supports: through RPC
 * the runtime learns that the reader went away only at the next write (so a left client
 * counted as open until its next heartbeat) and logs a `disconnected: abortRead()` error
 * for each. A client that stops reading is dropped once MAX_BACKLOG_EVENTS events wait for
 * it, so a stalled reader cannot hold the hub's memory.
 *
 * Streams keep the object awake (an open HTTP response cannot hibernate; WebSockets could)
 * and end when the object restarts: clients reconnect, and the first event of every
 * stream is the whole config, so nothing needs replaying from `Last-Event-ID`.
 *
 * RPC surface: fetch() (a stream, `streamRequest()` builds the request), snapshot(), set(),
 * stats().
 */
import { DurableObject } from "cloudflare:workers";
import { sseComment, sseEvent } from "./sse.ts";

/** The whole config: `version` counts the writes ever made (0 before the first). */
export interface ConfigSnapshot {
  readonly version: number;
  readonly values: Readonly<Record<string, unknown>>;
}

export interface StreamOptions {
  /** Period of the `: ping` comment. */
  readonly heartbeatMs: number;
  /** Period of the `event: tick` data events; null for none. */
  readonly intervalMs: number | null;
}

/** What /metrics reports of the hub. */
export interface HubStats {
  readonly version: number;
  readonly streamsOpen: number;
  /** Writes accepted since this object started (resets when it restarts, as a process counter does). */
  readonly writesTotal: number;
}

/** The request for a new stream: the options travel in the query of an internal URL. */
export function streamRequest(options: StreamOptions): Request {
  const url = new URL("https://config-hub.internal/stream");
  url.searchParams.set("heartbeatMs", String(options.heartbeatMs));
  if (options.intervalMs !== null) url.searchParams.set("intervalMs", String(options.intervalMs));
  return new Request(url);
}

function streamOptionsOf(url: URL): StreamOptions | null {
  const heartbeatMs = Number(url.searchParams.get("heartbeatMs"));
  const interval = url.searchParams.get("intervalMs");
  const intervalMs = interval === null ? null : Number(interval);
  const valid = (ms: number) => Number.isInteger(ms) && ms > 0;
  return valid(heartbeatMs) && (intervalMs === null || valid(intervalMs)) ? { heartbeatMs, intervalMs } : null;
}

/** The one hub: every isolate reaches the same object by this name. */
export function configHub(env: { readonly CONFIG_HUB: DurableObjectNamespace<ConfigHub> }): DurableObjectStub<ConfigHub> {
  return env.CONFIG_HUB.get(env.CONFIG_HUB.idFromName("config"));
}

/** Events queued for a client that does not read before it is dropped. */
const MAX_BACKLOG_EVENTS = 1024;

interface Subscriber {
  readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly timers: ReturnType<typeof setInterval>[];
}

const encoder = new TextEncoder();
const PING = encoder.encode(sseComment("ping"));

export class ConfigHub extends DurableObject {
  readonly #subscribers = new Set<Subscriber>();
  #writesTotal = 0;
  /** The current config, read from storage once and kept in step by set(). */
  #current: ConfigSnapshot | null = null;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      // version: the config version of the key's latest write, so MAX(version) is the config's.
      "CREATE TABLE IF NOT EXISTS config_values (key TEXT PRIMARY KEY, value TEXT NOT NULL, version INTEGER NOT NULL)",
    );
  }

  async snapshot(): Promise<ConfigSnapshot> {
    return this.#snapshot();
  }

  /** Sets one key (any JSON value), bumps the version and pushes a `change` event to every stream. */
  async set(key: string, value: unknown): Promise<{ version: number; key: string }> {
    const before = this.#snapshot();
    const version = before.version + 1;
    const json = JSON.stringify(value);
    this.ctx.storage.sql.exec(
      "INSERT INTO config_values (key, value, version) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version",
      key,
      json,
      version,
    );
    this.#current = { version, values: { ...before.values, [key]: JSON.parse(json) } };
    this.#writesTotal++;
    const event = encoder.encode(sseEvent({ event: "change", id: version, data: JSON.stringify({ version, key, value: JSON.parse(json) }) }));
    for (const subscriber of this.#subscribers) this.#send(subscriber, event);
    return { version, key };
  }

  /** `GET /stream?heartbeatMs=&intervalMs=` (see streamRequest()): a new text/event-stream. */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const options = url.pathname === "/stream" ? streamOptionsOf(url) : null;
    if (!options) return new Response("not a stream request", { status: 400 });
    return new Response(this.#open(options), { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  /**
   * A new stream: its first event is the whole config (`event: config`), then a `change`
   * per write, a `: ping` comment every heartbeatMs and, with intervalMs, an `event: tick`.
   */
  #open(options: StreamOptions): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const subscriber: Subscriber = { writer: writable.getWriter(), timers: [] };
    this.#subscribers.add(subscriber);
    // Settles when the stream errors (a failed write, an abort) or closes: never count it again.
    subscriber.writer.closed.then(
      () => this.#drop(subscriber),
      () => this.#drop(subscriber),
    );

    const current = this.#snapshot();
    this.#send(subscriber, encoder.encode(sseEvent({ event: "config", id: current.version, data: JSON.stringify(current) })));
    subscriber.timers.push(setInterval(() => this.#send(subscriber, PING), options.heartbeatMs));
    if (options.intervalMs !== null) {
      let n = 0;
      subscriber.timers.push(
        setInterval(() => {
          n++;
          this.#send(subscriber, encoder.encode(sseEvent({ event: "tick", data: JSON.stringify({ n, version: this.#snapshot().version }) })));
        }, options.intervalMs),
      );
    }
    return readable;
  }

  async stats(): Promise<HubStats> {
    return { version: this.#snapshot().version, streamsOpen: this.#subscribers.size, writesTotal: this.#writesTotal };
  }

  #snapshot(): ConfigSnapshot {
    if (this.#current) return this.#current;
    const values: Record<string, unknown> = {};
    let version = 0;
    for (const row of this.ctx.storage.sql.exec<{ key: string; value: string; version: number }>("SELECT key, value, version FROM config_values")) {
      values[row.key] = JSON.parse(row.value);
      version = Math.max(version, row.version);
    }
    this.#current = { version, values };
    return this.#current;
  }

  /** Writes without waiting: a client that reads slowly must not hold up the others. */
  #send(subscriber: Subscriber, bytes: Uint8Array): void {
    const backlog = subscriber.writer.desiredSize;
    if (backlog === null || backlog < -MAX_BACKLOG_EVENTS) {
      this.#drop(subscriber);
      return;
    }
    subscriber.writer.write(bytes).catch(() => this.#drop(subscriber));
  }

  #drop(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber)) return;
    for (const timer of subscriber.timers) clearInterval(timer);
    subscriber.writer.abort("stream dropped").catch(() => {});
  }
}
