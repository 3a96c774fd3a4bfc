/**
 * What the target answered a chaos run's requests, as the shards' fetch saw each one
 * settle, and the chaos schedule's "bad target answer" (scripts/bench/chaos/schedule.ts):
 * for a while the run's requests reach the target with its knobs set to answer badly
 * (workers/target/knobs.ts: `status=500`; `size=64`, a 200 whose body is not the
 * document; `ms=` past the run's timeout). The request still goes to the real target,
 * which counts it in its ledger and answers as told.
 *
 * The shards run in this isolate (the objects of the test Worker), and each invocation
 * binds the global fetch as it starts (workers/shard/load-shard.ts): so fetch is wrapped
 * once, before the first run, and the wrapper looks up the run of each request by its
 * RUN_HEADER. What it counts is the ground truth the `failures` invariant holds D1 to
 * (scripts/bench/chaos/invariants.ts).
 */
import { RUN_HEADER } from "../../../../core/run/protocol.ts";
import type { FetchedAnswers } from "../../chaos/invariants.ts";
import type { BadAnswer } from "../../chaos/schedule.ts";

interface Tally {
  status5xx: number;
  timeouts: number;
  garbage: number;
  connectionErrors: number;
  cut: number;
  /** The bad answer being given now, if any. */
  bad: { readonly answer: BadAnswer; readonly timeoutMs: number } | null;
}

const tallies = new Map<string, Tally>();
let fetchWrapped = false;

/** The knobs that make the target answer `answer` (a request's own query kept otherwise). */
function badly(url: URL, answer: BadAnswer, timeoutMs: number): void {
  if (answer === "500") url.searchParams.set("status", "500");
  else if (answer === "garbage") url.searchParams.set("size", "64");
  else url.searchParams.set("ms", String(timeoutMs + 500));
}

/** Wraps the global fetch (once per isolate): before the first run's shards bind it. */
export function wrapFetch(): void {
  if (fetchWrapped) return;
  fetchWrapped = true;
  const original = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const header = new Headers(init?.headers).get(RUN_HEADER);
    const tally = header ? tallies.get(header.split(";")[0]!) : undefined;
    if (!tally || typeof input !== "string") return original(input, init);
    const bad = tally.bad;
    const url = new URL(input);
    if (bad) badly(url, bad.answer, bad.timeoutMs);
    try {
      const response = await original(url.toString(), init);
      if (response.status >= 500) tally.status5xx++;
      else if (bad?.answer === "garbage") tally.garbage++;
      return response;
    } catch (error) {
      const reason = init?.signal?.aborted ? (init.signal.reason as { name?: string } | undefined) : undefined;
      // A timeout is a result. The same signal cuts a request at its iteration's graceful stop
      // (the run's end plus the timeout here), and stop() cuts it: neither is a result, as the
      // shard counts them, and each has a reason of its own (workers/shard/timeout-queue.ts).
      // The time since the request left cannot tell them apart: on a loaded machine the
      // shard's timer starts before this wrapper runs and is swept late.
      if (reason?.name === "TimeoutError") tally.timeouts++;
      else if (init?.signal?.aborted) tally.cut++;
      else tally.connectionErrors++;
      throw error;
    }
  };
}

/** Starts counting `runId`'s requests (before its t0: nothing carries its header before). */
export function watchAnswers(runId: string): void {
  tallies.set(runId, { status5xx: 0, timeouts: 0, garbage: 0, connectionErrors: 0, cut: 0, bad: null });
}

/** The target answers `runId`'s requests `answer` from now until `untilMs` (epoch ms). */
export async function answerBadly(runId: string, answer: BadAnswer, timeoutMs: number, untilMs: number): Promise<void> {
  const tally = tallies.get(runId)!;
  tally.bad = { answer, timeoutMs };
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, untilMs - Date.now())));
  tally.bad = null;
}

/** What was counted for `runId`, and it forgotten. */
export function answersOf(runId: string): FetchedAnswers {
  const { status5xx, timeouts, garbage, connectionErrors, cut } = tallies.get(runId)!;
  tallies.delete(runId);
  return { status5xx, timeouts, garbage, connectionErrors, cut };
}
