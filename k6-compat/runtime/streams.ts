/**
 * k6/experimental/streams: k6 implements parts of the WHATWG Streams standard for scripts; a
 * Worker's isolate (and Node, for the init context) has the standard's own classes, so the
 * module is those globals. What k6 v1.8.1 exports under that name, nothing more
 * (internal/js/modules/k6/experimental/streams/module.go).
 */
export const STREAM_CLASSES = [
  "ReadableStream",
  "ReadableStreamDefaultReader",
  "CountQueuingStrategy",
  "WritableStream",
  "WritableStreamDefaultWriter",
] as const;

/** The module's exports: each the isolate's global of that name. */
export function createStreams(): Record<(typeof STREAM_CLASSES)[number], unknown> {
  const globals = globalThis as unknown as Record<string, unknown>;
  return Object.fromEntries(STREAM_CLASSES.map((name) => [name, globals[name]])) as Record<(typeof STREAM_CLASSES)[number], unknown>;
}
