/**
 * Where each second of a run went, from a V8 CPU profile of the generator's isolate: every
 * sample is given to the piece of edgeload's bookkeeping its stack is in (the frame nearest
 * the leaf that names one: a window's close, its serialisation, storage, the flush, the
 * coordinator's merge, D1, the live view, sub-metrics), else to the send path, V8's own
 * work or the rest, and counted in the run second it was taken in. A second whose tail was
 * slow can then be read beside what ran in it (issue 50: no request should wait on the
 * shard's own bookkeeping).
 *
 * workerd delivers samples irregularly and the sample after an idle gap carries the gap, so
 * each sample counts at most MAX_SAMPLE_US: the figures are sampled time, good for shares
 * and for telling seconds apart, not absolute CPU (the generator bench reads that from /proc).
 */

/** The profile's parts the attribution reads (V8's Profiler.stop result). */
export interface SampledProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string };
    readonly children?: readonly number[];
  }>;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
}

/** The most one sample counts for (µs); see the header. */
export const MAX_SAMPLE_US = 50_000;

/** Each piece of bookkeeping and the functions that are it (bundled names may end in a digit). */
export const BOOKKEEPING: ReadonlyArray<readonly [string, RegExp]> = [
  ["serialise", /^(toWire|mergeWire|mergeSnapshot)\d*$/],
  ["sub-metrics", /^recordRequestSubMetrics\d*$/],
  ["storage", /^(put|saveUnconfirmed|putUnconfirmed|#save|save|hold|setAlarm|deleteAll|#written)\d*$/],
  ["D1", /^(batch|exec|_send|_sendOrThrow|windowStatements|writeWindows)\d*$/],
  ["flush", /^(flush|#flushOnce|#finalFlush|dueBatch|withHeldWindows)\d*$/],
  ["window close", /^(closeDue|#closeBefore|closeAll|#windowClosed|windowClosed)\d*$/],
  ["coordinator merge", /^(takeInFlush|takeInFlushes)\d*$/],
  ["live view", /^(publishWindows|#?showClosedWindows|livePoint|windowPoints|runView|runViewOf|get live)\d*$/],
];
/** The request's own path: what a paced floor does too. */
const SEND_PATH = /^(fetchAndMeasure|send|platformFetch|bodyBytes|#record|recordTrail|launch|#launch|runIteration|runStep|#iteration|fetch|arrayBuffer)\d*$/;

export type Piece = (typeof BOOKKEEPING)[number][0] | "send path" | "V8 (program, GC)" | "other";
export const PIECES: readonly Piece[] = [...BOOKKEEPING.map(([name]) => name), "send path", "V8 (program, GC)", "other"];

/** The piece a sampled stack is in: the bookkeeping frame nearest the leaf, else the send path, V8's own, or other. */
function pieceOf(stack: readonly string[]): Piece | null {
  const leaf = stack[0];
  if (leaf === "(idle)") return null;
  if (leaf === "(program)" || leaf === "(garbage collector)") return "V8 (program, GC)";
  for (const name of stack) for (const [piece, re] of BOOKKEEPING) if (re.test(name)) return piece;
  return stack.some((name) => SEND_PATH.test(name)) ? "send path" : "other";
}

const emptyRow = () => Object.fromEntries(PIECES.map((p) => [p, 0])) as Record<Piece, number>;

/**
 * Sampled ms per piece in each run second. `offsetMs`: the run's second 0 begins this long
 * after the profile's start (negative when the profile started after t0).
 */
export function bookkeepingBySecond(profile: SampledProfile, offsetMs: number): Array<Record<Piece, number>> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName]));
  const pieces = new Map<number, Piece | null>();
  const pieceAt = (id: number) => {
    if (!pieces.has(id)) {
      const stack: string[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(frames.get(at) ?? "");
      pieces.set(id, pieceOf(stack));
    }
    return pieces.get(id)!;
  };
  const seconds: Array<Record<Piece, number>> = [];
  let atUs = profile.startTime;
  profile.samples.forEach((id, i) => {
    const deltaUs = profile.timeDeltas[i] ?? 0;
    atUs += deltaUs;
    const piece = pieceAt(id);
    const second = Math.floor(((atUs - profile.startTime) / 1000 - offsetMs) / 1000);
    if (piece === null || second < 0) return;
    const row = (seconds[second] ??= emptyRow());
    row[piece] = (row[piece] ?? 0) + Math.min(deltaUs, MAX_SAMPLE_US) / 1000;
  });
  for (let s = 0; s < seconds.length; s++) seconds[s] ??= emptyRow();
  return seconds;
}
