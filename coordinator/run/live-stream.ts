/**
 * Server-Sent Events from a RunCoordinator to the dashboards watching its run.
 *
 * Events are queued by send() and written by flush(), once per coordinator tick: one chunk
 * per stream per tick, whatever the tick had to say (a stream write is what costs, not its
 * size: see the README's dashboard measurement). Each chunk is encoded once; writes are not
 * awaited, so a slow browser never holds up a window merge. A stream whose queue passes
 * MAX_QUEUED_EVENTS (a tab asleep, a client that stopped reading) is closed rather than
 * buffered without bound; EventSource reconnects, and a reconnecting page receives the
 * history again, so it loses nothing it draws.
 *
 * Event names: `history` (every window so far, sent first), `window` (one merged window),
 * `status` (the run as it stands, each tick), `summary` (the final summary), `end` (the
 * run is over: the stream closes after it).
 */

/** Events a stream may have queued before it is dropped as too slow. */
const MAX_QUEUED_EVENTS = 256;
/** Streams one coordinator serves at once; one more answers 503 (see the README's measurement). */
export const MAX_LIVE_CLIENTS = 1_000;

const encoder = new TextEncoder();

/** One event in the text/event-stream format (data is JSON, so it holds no newline). */
export function sseEvent(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export class LiveStream {
  readonly #clients = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  #pending: Uint8Array[] = [];

  get size(): number {
    return this.#clients.size;
  }

  /**
   * A new stream that starts with `first` (already encoded events), or null when the
   * object already serves MAX_LIVE_CLIENTS streams.
   */
  open(first: readonly Uint8Array[], { closeAfterFirst = false } = {}): Response | null {
    if (this.#clients.size >= MAX_LIVE_CLIENTS) return null;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, new CountQueuingStrategy({ highWaterMark: MAX_QUEUED_EVENTS }));
    const writer = writable.getWriter();
    // Tell EventSource to wait 2 s before reconnecting, and flush the headers at once.
    void writer.write(encoder.encode("retry: 2000\n\n")).catch(() => {});
    for (const chunk of first) void writer.write(chunk).catch(() => {});
    if (closeAfterFirst) void writer.close().catch(() => {});
    else this.#clients.add(writer);
    return new Response(readable, {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
    });
  }

  /** Queues an event for every stream (written at the next flush). */
  send(event: string, data: unknown): void {
    if (this.#clients.size === 0) return;
    this.#pending.push(sseEvent(event, data));
  }

  /**
   * Writes what was queued since the last flush as one chunk. The coordinator flushes each
   * tick, with a status at least, which also keeps idle proxies from closing the streams.
   */
  flush(): void {
    const pending = this.#pending;
    this.#pending = [];
    if (pending.length === 0 || this.#clients.size === 0) return;
    const chunk = new Uint8Array(pending.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const part of pending) {
      chunk.set(part, at);
      at += part.byteLength;
    }
    this.#write(chunk);
  }

  /** Writes what is queued, then ends every stream (after the run's last events). */
  closeAll(): void {
    this.flush();
    for (const writer of this.#clients) void writer.close().catch(() => {});
    this.#clients.clear();
  }

  #write(chunk: Uint8Array): void {
    for (const writer of this.#clients) {
      // desiredSize turns negative as unread events queue up; null once the reader is gone.
      if (writer.desiredSize === null || writer.desiredSize < 0) {
        this.#drop(writer);
        continue;
      }
      writer.write(chunk).catch(() => this.#drop(writer));
    }
  }

  #drop(writer: WritableStreamDefaultWriter<Uint8Array>): void {
    this.#clients.delete(writer);
    void writer.abort().catch(() => {});
  }
}
