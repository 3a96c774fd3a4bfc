/**
 * Server-Sent Events read incrementally from a `text/event-stream` body, chunk by chunk as
 * the load generator receives it, so each event can be timed when it arrives rather than
 * when the stream ends.
 *
 * The field grammar (WHATWG HTML §9.2.6, "Parsing an event stream": `data`, `event`, `id`,
 * `retry`, comments after ":", lines ended by CRLF, LF or CR, an event dispatched by a blank
 * line) is left to `eventsource-parser`, which is maintained, has no dependencies and uses
 * no Node or DOM API, so it runs in workerd as in Node. This module adds what a byte stream
 * needs on top: UTF-8 decoding that carries a character split across chunks (TextDecoder
 * with `stream: true`; invalid bytes become U+FFFD, as in a browser's EventSource), counts
 * of events and comments, and a bound on what a stream may buffer.
 *
 * Events are delivered synchronously inside the `push()` of the chunk that completes them,
 * so a caller timing a stream stamps each event with its own clock around `push()`; this
 * module reads no clock. `retry` fields are ignored (a load generator does not reconnect on
 * the server's say), and so are unknown fields, as the spec says.
 *
 * @example
 *   const reader = createSseReader((e) => latencies.push(now() - sentAt));
 *   for await (const chunk of response.body) reader.push(chunk);
 *   reader.end();
 */
import { createParser } from "eventsource-parser";

export interface SseEvent {
  /** The `event` field, or "message" when the event has none (as EventSource reports it). */
  readonly event: string;
  /** The `data` lines joined with "\n". */
  readonly data: string;
  /** The `id` field when this event's block has one. */
  readonly id?: string;
}

export interface SseReaderOptions {
  /** Called for each comment line (`: ping`) with the text after ":" and one optional space. */
  readonly onComment?: (text: string) => void;
  /** Most characters a stream may hold unfinished (a partial line plus an event's data so far). */
  readonly maxBufferChars?: number;
}

export interface SseReader {
  /** Feeds the next piece of the body: bytes (decoded as UTF-8) or already decoded text. */
  push(chunk: Uint8Array | string): void;
  /** The body has ended: an event without its closing blank line is dropped, as the spec says. */
  end(): void;
  /** Events delivered so far. */
  readonly events: number;
  /** Comment lines seen so far: keep-alives, not events. */
  readonly comments: number;
}

/** 4 Mi characters: far above any event a target should send, well below a Worker's memory. */
export const DEFAULT_SSE_MAX_BUFFER_CHARS = 4 * 1024 * 1024;

/** Thrown by push() when a stream holds more than maxBufferChars without completing an event. */
export class SseBufferOverflowError extends RangeError {
  override readonly name = "SseBufferOverflowError";
}

/**
 * A reader for one event stream. Do not mix bytes and strings in one stream: the decoder
 * may be holding the first bytes of a character when a string arrives.
 */
export function createSseReader(onEvent: (event: SseEvent) => void, options: SseReaderOptions = {}): SseReader {
  const maxBufferChars = options.maxBufferChars ?? DEFAULT_SSE_MAX_BUFFER_CHARS;
  const decoder = new TextDecoder("utf-8");
  let events = 0;
  let comments = 0;
  let ended = false;
  let overflowed = false;
  const parser = createParser({
    onEvent(message) {
      events++;
      const event = message.event ?? "message";
      onEvent(message.id === undefined ? { event, data: message.data } : { event, data: message.data, id: message.id });
    },
    onComment(text) {
      comments++;
      options.onComment?.(text);
    },
    onError(error) {
      if (error.type === "max-buffer-size-exceeded") overflowed = true;
    },
    maxBufferSize: maxBufferChars,
  });

  const feed = (text: string) => {
    if (!overflowed && text) parser.feed(text);
    if (overflowed) throw new SseBufferOverflowError(`the event stream buffered more than ${maxBufferChars} characters without completing an event`);
  };

  return {
    push(chunk) {
      if (ended) throw new Error("createSseReader: push() after end()");
      feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    },
    end() {
      if (ended) return;
      ended = true;
      if (!overflowed) feed(decoder.decode());
      parser.reset();
    },
    get events() {
      return events;
    },
    get comments() {
      return comments;
    },
  };
}
