/**
 * Reading an open event stream (SSE) for a stream step: each event counted into the window
 * it arrives in; time to open, to the first event, how long the stream stayed open, and
 * whether it ended before it was meant to, as custom metrics of the step.
 */
import type { CustomMetrics } from "../../core/metrics/metric-stats.ts";
import { createSseReader } from "../../core/formats/sse.ts";
import type { StreamOutcome } from "../../scenarios/flow.ts";
import type { EngineClock } from "./engine-types.ts";

const US_PER_MS = 1000;

export interface EventStreamReading {
  readonly body: ReadableStream<Uint8Array>;
  readonly sendMs: number;
  readonly openedMs: number;
  /** Read until then (or until the run stops), whichever is first. */
  readonly untilMs: number;
  /** Closes the stream's request (cancelling the body alone can leave the connection open). */
  readonly abort: () => void;
  readonly clock: EngineClock;
  readonly isStopped: () => boolean;
  /** The open streams, closed at stop(): the stream's closer is in it while it is read. */
  readonly open: Set<() => void>;
  /** The custom metrics of the window of `ms`, for this stream's step. */
  readonly customAt: (ms: number) => CustomMetrics;
}

/** Reads the stream until `untilMs` or stop(). */
export async function readEventStream(o: EventStreamReading): Promise<StreamOutcome> {
  const { body, sendMs, openedMs, untilMs, abort, clock } = o;
  const custom = o.customAt;
  custom(openedMs).trend("sse_time_to_open", (openedMs - sendMs) * US_PER_MS);
  let messages = 0;
  let firstMessageMs: number | null = null;
  const sse = createSseReader(() => {
    const now = clock.now();
    if (firstMessageMs === null) {
      firstMessageMs = now - sendMs;
      custom(now).trend("sse_time_to_first_message", firstMessageMs * US_PER_MS);
    }
    messages++;
    custom(now).count("sse_messages");
  });
  const reader = body.getReader();
  let endedEarly = false;
  const close = () => {
    abort();
    void reader.cancel().catch(() => {});
  };
  o.open.add(close);
  if (Number.isFinite(untilMs)) void clock.sleep(Math.max(0, untilMs - clock.now())).then(close);
  try {
    for (;;) {
      if (o.isStopped() || clock.now() >= untilMs) break;
      const { done, value } = await reader.read();
      if (done) {
        endedEarly = clock.now() < untilMs - 1 && !o.isStopped();
        break;
      }
      sse.push(value);
    }
  } catch {
    endedEarly = !o.isStopped() && clock.now() < untilMs - 1;
  } finally {
    o.open.delete(close);
    close();
  }
  const endMs = clock.now();
  const last = custom(endMs);
  last.trend("sse_stream_duration", (endMs - openedMs) * US_PER_MS);
  if (endedEarly) last.count("sse_streams_ended_early");
  return { messages, firstMessageMs, openForMs: endMs - openedMs, endedEarly };
}
