import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSseReader, SseBufferOverflowError, type SseEvent } from "./sse.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Reads `bytes` cut at the given offsets; returns the events and the reader's counts. */
function read(bytes: Uint8Array, cuts: readonly number[] = []) {
  const events: SseEvent[] = [];
  const reader = createSseReader((e) => events.push(e));
  const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.length];
  for (let i = 0; i < bounds.length - 1; i++) reader.push(bytes.subarray(bounds[i], bounds[i + 1]));
  reader.end();
  return { events, comments: reader.comments, count: reader.events };
}

/**
 * A stream with everything a chunk boundary can break: CRLF and bare CR line ends, 2-, 3-
 * and 4-byte characters, multi-line data, id and event fields, comments and retry.
 */
const STREAM = [
  ": connected\r\n",
  "retry: 3000\r\n",
  "\r\n",
  "id: 1\r\nevent: token\r\ndata: héllo\r\n\r\n",
  "data: first line\rdata: 2 € 😀\r\rdata:no-space\n\n",
  ": ping\n\n",
  'event: done\nid: 2\ndata: {"ok":true}\ndata\n\n',
].join("");

const EXPECTED: SseEvent[] = [
  { event: "token", data: "héllo", id: "1" },
  { event: "message", data: "first line\n2 € 😀" },
  { event: "message", data: "no-space" },
  { event: "done", data: '{"ok":true}\n', id: "2" },
];

describe("createSseReader", () => {
  it("reads events, multi-line data, id and event fields; counts comments; ignores retry", () => {
    const result = read(utf8(STREAM));
    expect(result.events).toEqual(EXPECTED);
    expect(result.count).toBe(4);
    expect(result.comments).toBe(2);
  });

  it("reads the same events whatever the chunk boundaries (every byte, then random cuts)", () => {
    const bytes = utf8(STREAM);
    expect(
      read(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ).events,
    ).toEqual(EXPECTED);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), (cuts) => {
        const result = read(bytes, cuts);
        expect(result.events).toEqual(EXPECTED);
        expect(result.comments).toBe(2);
      }),
      { numRuns: 500 },
    );
  });

  it("carries a character split inside its UTF-8 bytes into the next chunk", () => {
    const bytes = utf8("data: 😀\n\n");
    // The emoji is bytes 6…9: cut after its first, second and third byte.
    for (const cut of [7, 8, 9]) expect(read(bytes, [cut]).events).toEqual([{ event: "message", data: "😀" }]);
    // One chunk per byte, with the 2-byte é too.
    const accents = utf8("data: déjà vu\n\n");
    expect(
      read(
        accents,
        Array.from({ length: accents.length }, (_, i) => i),
      ).events,
    ).toEqual([{ event: "message", data: "déjà vu" }]);
  });

  it("treats a CRLF split between \\r and \\n as one line end, not an empty line that dispatches", () => {
    const bytes = utf8("data: a\r\ndata: b\r\n\r\n");
    // Cut right after each "\r": a reader that took "\r" and "\n" as two line ends would
    // dispatch "a" alone and then "b".
    const crs = [8, 17, 19];
    expect(read(bytes, crs).events).toEqual([{ event: "message", data: "a\nb" }]);
    for (const cut of crs) expect(read(bytes, [cut]).events).toEqual([{ event: "message", data: "a\nb" }]);
  });

  it("drops an event the stream ends before its blank line, and takes decoded strings too", () => {
    const events: SseEvent[] = [];
    const reader = createSseReader((e) => events.push(e));
    reader.push("data: complete\n");
    expect(events).toEqual([]); // no blank line yet: not an event
    reader.push("\ndata: cut off");
    expect(events).toEqual([{ event: "message", data: "complete" }]);
    reader.end();
    expect(events).toHaveLength(1);
    expect(() => reader.push("data: late\n\n")).toThrow(/push\(\) after end\(\)/);
  });

  it("delivers each event inside the push that completes it, so the caller can time it", () => {
    const log: string[] = [];
    const reader = createSseReader((e) => log.push(`event ${e.data}`));
    for (const chunk of ["data: 1\n", "\ndata: 2\n\ndata: ", "3\n\n"]) {
      log.push("push");
      reader.push(chunk);
    }
    expect(log).toEqual(["push", "push", "event 1", "event 2", "push", "event 3"]);
  });

  it("passes comments to onComment without counting them as events, and an empty data line is an event", () => {
    const comments: string[] = [];
    const events: SseEvent[] = [];
    const reader = createSseReader((e) => events.push(e), { onComment: (text) => comments.push(text) });
    reader.push(utf8(":\n: keep-alive\n:no space\n\ndata:\n\n"));
    reader.end();
    expect(comments).toEqual(["", "keep-alive", "no space"]);
    expect(reader.comments).toBe(3);
    expect(events).toEqual([{ event: "message", data: "" }]);
    expect(reader.events).toBe(1);
  });

  it("refuses a stream that buffers more than maxBufferChars without completing an event", () => {
    const reader = createSseReader(() => {}, { maxBufferChars: 64 });
    reader.push("data: small\n\n");
    expect(() => reader.push(`data: ${"x".repeat(100)}`)).toThrow(SseBufferOverflowError);
    expect(() => reader.push("\n\n")).toThrow(/buffered more than 64 characters/);
    expect(reader.events).toBe(1);
    expect(() => reader.end()).not.toThrow();
  });
});
