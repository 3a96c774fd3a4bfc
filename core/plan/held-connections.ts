/**
 * Held connections against a shard's memory. An SSE stream or an outbound WebSocket gives
 * its connection slot back when its headers arrive (as any request), but keeps its memory
 * while it stays open, so how many a run holds at once sets a floor on its shard count:
 * the planner (plan.ts) sizes the shards by it and says so in the plan's notes, the usage
 * model (run-usage.ts) and the limit checks (limit-checks.ts) report it per shard.
 */
import type { RunSpec } from "../spec/types.ts";
import { ArrivalSchedule } from "../schedule/arrival-schedule.ts";
import { PLATFORM_LIMITS } from "./platform-limits.ts";

const MIB = 1024 * 1024;
/** Memory of one Worker isolate (a Durable Object shard), the platform limit. */
const ISOLATE_MEMORY_BYTES = PLATFORM_LIMITS.isolateMemoryBytes;
/** What a shard keeps for itself: runtime, engine, windows, flushes. */
export const SHARD_MEMORY_RESERVE_BYTES = 32 * MIB;
/**
 * Memory an open SSE stream costs a shard (request, response body stream, reader, parser
 * buffers, socket): 155 KiB measured in workerd (`npm run bench -- --only streams`, the
 * slope of resident memory over 0 → 1,000 held streams), rounded up.
 */
export const STREAM_MEMORY_BYTES = 160 * 1024;
export const STREAMS_PER_SHARD = Math.floor((ISOLATE_MEMORY_BYTES - SHARD_MEMORY_RESERVE_BYTES) / STREAM_MEMORY_BYTES);

/**
 * How many SSE streams the run may hold open at once: one per VU (closed model, `peakVUs`),
 * or the peak arrival rate times how long each is held (open model; held to the end, every
 * arrival's stream).
 */
export function concurrentStreams(spec: RunSpec, peakVUs: number | null): number {
  const streamSteps = spec.steps.filter((s) => s.sse);
  if (streamSteps.length === 0) return 0;
  if (peakVUs !== null) return peakVUs;
  const holdMs = Math.max(...streamSteps.map((s) => s.sse!.holdMs ?? spec.durationMs));
  return Math.min(spec.peakRatePerS * (holdMs / 1000), new ArrivalSchedule(spec.stages).total);
}

/**
 * Whether a k6 script opens WebSockets: one that imports k6/websockets declares k6's ws_*
 * metrics in its init context (k6-compat/runtime/vu-modules.ts), so its spec carries them.
 */
export const usesWebSockets = (spec: Pick<RunSpec, "script" | "metrics">): boolean => Boolean(spec.script) && spec.metrics.ws_sessions !== undefined;

/**
 * How many WebSockets the run may hold open at once: one per VU that may run at the same
 * time (maxInFlight: the peak VUs, or k6's maxVUs). A script that opens several per VU
 * holds more; the plan's note says the figure is per VU.
 */
export function concurrentSockets(spec: Pick<RunSpec, "script" | "metrics" | "maxInFlight">): number {
  return usesWebSockets(spec) ? spec.maxInFlight : 0;
}

/**
 * The fewest shards that hold the run's streams and sockets within their memory, with a
 * note for each kind the run holds (pushed to `notes`). `peakVUs` as for concurrentStreams.
 */
export function shardsForHeldConnections(spec: RunSpec, peakVUs: number | null, notes: string[]): number {
  const sseStreams = concurrentStreams(spec, peakVUs);
  const sockets = concurrentSockets(spec);
  // A held WebSocket is a held connection as an SSE stream is: both count against a shard's memory.
  const shards = Math.ceil((sseStreams + sockets) / STREAMS_PER_SHARD);
  const atLeast = `at least ${shards} shard${shards === 1 ? "" : "s"}`;
  if (sseStreams > 0) {
    notes.push(
      `SSE: up to ~${Math.ceil(sseStreams)} streams open at once; a stream holds a connection slot only until its headers arrive, but its memory (~${STREAM_MEMORY_BYTES / 1024} KiB) while open, so a shard (${ISOLATE_MEMORY_BYTES / MIB} MB isolate, ${SHARD_MEMORY_RESERVE_BYTES / MIB} MB kept for itself) holds at most ${STREAMS_PER_SHARD}: ${atLeast} for the streams`,
    );
  }
  if (sockets > 0) {
    notes.push(
      `WebSockets: up to ~${sockets} open at once (one per VU); a handshake is one of the ${PLATFORM_LIMITS.connectionsPerInvocation} connections a shard may have waiting for response headers, an open socket is not, but it keeps a held connection's memory (~${STREAM_MEMORY_BYTES / 1024} KiB), so a shard holds at most ${STREAMS_PER_SHARD}: ${atLeast}`,
    );
  }
  return shards;
}
