/**
 * A shard of the scale simulation (scale-simulation.ts): the real ShardEngine and
 * WindowFlusher on the virtual clock, driven as LoadShard drives them — an engine per
 * invocation until its share is sent, closed windows stored and flushed in the background
 * (each one, or every fourth in a tree, as LoadShard holds them), a final flush with the done flag — against the simulation's fake target.
 * LoadShard itself is a Durable Object and cannot run in Node; this repeats its few lines
 * of wiring, naming the methods it mirrors.
 */
import type { LoopWatch } from "../../core/metrics/loop-delay.ts";
import { COUNTERS } from "../../core/metrics/metric-stats.ts";
import type { ShardAssignment, ShardTelemetry, ShardWindow } from "../../core/run/protocol.ts";
import { customStepsFlow } from "../../scenarios/custom-steps.ts";
import { ShardEngine } from "../../workers/shard/engine.ts";
import { WindowFlusher, windowKey } from "../../workers/shard/window-flusher.ts";
import { writeDue } from "../../workers/shard/shard-state.ts";
import { type FlushTarget, jsonBytes, MemoryPending, rpc, type SimContext } from "./scale-objects.ts";

const COMPLETED = COUNTERS.indexOf("completed");
const DROPPED = COUNTERS.indexOf("dropped");

/** A shard as LoadShard drives it: start(), invocations of the engine (alarms), windows stored and flushed, abort(), cleanUp(). */
export class SimShard {
  readonly a: ShardAssignment;
  /** What its windows held: completed and dropped requests (to check nothing is lost on the way). */
  completed = 0;
  dropped = 0;
  sent = 0;
  /** When it stopped sending (virtual ms), once it has. */
  stoppedAtMs: number | null = null;
  readonly #sim: SimContext;
  readonly #fetcher: typeof fetch;
  readonly #loopWatch: LoopWatch;
  readonly #pending = new MemoryPending(0);
  /**
   * Rows LoadShard writes besides its closed windows (load-shard.ts): at start its assignment,
   * its state and its alarm; the warm-up's state; per invocation its state as it starts and
   * as it ends, and the alarm set (a hand-over) or deleted; at the end its assignment again,
   * its secrets removed, and the alarm that guards its final flush.
   */
  #otherRows = 4;
  readonly #flusher: WindowFlusher;
  #engine: ShardEngine | null = null;
  #stopRequested = false;
  #finished = false;
  #watermarkS = 0;
  #closedThroughS = 0;
  /** Windows closed since the last write of the state (LoadShard's #unwritten). */
  #held: Array<readonly [string, ShardWindow]> = [];
  #invocations = 0;
  /** RPCs into it (start, abort, cleanUp): each a billed request and an invocation Workers Logs may log. */
  #rpcs = 0;
  /** Its storage was deleted (cleanUp): it holds nothing. */
  #cleaned = false;
  #peakInFlight = 0;

  constructor(a: ShardAssignment, sim: SimContext, fetcher: typeof fetch, loopWatch: LoopWatch, receiver: () => FlushTarget) {
    this.a = a;
    this.#sim = sim;
    this.#fetcher = fetcher;
    this.#loopWatch = loopWatch;
    const route = {
      runId: a.runId,
      senderIndex: a.shard.index,
      receiver: rpc(sim, receiver),
      giveUpAtMs: a.deadlineMs + a.flushGraceMs,
      sender: `shard ${a.shard.index}`,
    };
    this.#flusher = new WindowFlusher({
      pending: this.#pending,
      clock: sim.time.clock,
      route: () => route,
      progress: () => ({ finished: this.#finished, watermarkS: this.#watermarkS, telemetry: this.#telemetry() }),
      stopEngine: () => this.#stop(),
    });
  }

  /** LoadShard.start(), as its level-1 aggregator (or the coordinator) calls it: one RPC. */
  start(): void {
    this.#rpcs++;
  }

  /** LoadShard.alarm(): invocations until the share is done (a handoff starts the next), then the final flush. */
  async run(): Promise<void> {
    await this.#sim.time.sleep(this.a.t0Ms - this.#sim.time.now);
    let cursor = 0;
    for (;;) {
      const part = ++this.#invocations;
      const engine: ShardEngine = new ShardEngine(
        this.a,
        this.#sim.time.clock,
        this.#fetcher,
        (w) => this.#windowClosed({ ...w, part }, engine),
        customStepsFlow(this.a.spec),
        this.#loopWatch,
      );
      this.#engine = engine;
      if (this.#stopRequested) engine.stop();
      const result = await engine.run(cursor, this.a.iterationsPerInvocation);
      this.#engine = null;
      this.#storeHeld(false); // in sliceEnded's write (one of #otherRows)
      this.#otherRows += 3;
      this.sent += result.sent;
      this.#peakInFlight = Math.max(this.#peakInFlight, result.peakInFlight);
      cursor = result.cursor;
      if (result.end !== "handoff") break;
      await this.#flusher.flush(false);
    }
    this.stoppedAtMs = this.#sim.time.now;
    this.#otherRows += 2;
    this.#finished = true;
    await this.#flusher.flush(true);
  }

  /** Invocations of its engine (LoadShard.alarm() runs that sent): the first, and one per hand-over. */
  get invocations(): number {
    return this.#invocations;
  }

  /** Billed requests into it: its alarms (invocations) and the RPCs it was sent. */
  get requests(): number {
    return this.#invocations + this.#rpcs;
  }

  /**
   * Bytes LoadShard's storage holds (issue 49): its assignment and the windows not yet
   * acknowledged; nothing once cleaned up (LoadShard.cleanUp deletes everything).
   */
  get storageBytes(): number {
    return this.#cleaned ? 0 : jsonBytes(this.a) + jsonBytes([...this.#pending.load()]);
  }

  /** Storage rows LoadShard writes for what this shard did: its state with each closed window, and the rest (#otherRows). */
  get storageRowsWritten(): number {
    return this.#pending.rowsWritten + this.#otherRows;
  }

  /** LoadShard.abort() (an RPC) while its engine runs: stop sending; what was measured is still flushed. */
  abort(): void {
    this.#rpcs++;
    this.#stop();
  }

  /** LoadShard.cleanUp() (an RPC, once the run is final and in D1): its storage goes, tombstone and all. */
  cleanUp(): void {
    this.#rpcs++;
    this.#stop();
    this.#cleaned = true;
  }

  /** Stops its engine (an abort, or an ack saying stop); what was measured is still flushed. */
  #stop(): void {
    this.#stopRequested = true;
    this.#engine?.stop();
  }

  /** LoadShard's window close: stored, then flushed in the background. */
  #windowClosed(window: ShardWindow, engine: ShardEngine): void {
    for (const [, wire] of window.steps) {
      this.completed += wire.c[COMPLETED] ?? 0;
      this.dropped += wire.c[DROPPED] ?? 0;
    }
    // Held until a write is due (assignment.windowsPerWrite), as LoadShard holds them.
    this.#held.push([windowKey(window), window]);
    this.#closedThroughS = engine.closedThrough;
    if (!writeDue(this.#held.length, this.a.windowsPerWrite, window.windowS, this.a.shard.index)) return;
    this.#storeHeld(true);
    void this.#sim.time.sleep(0).then(() => this.#flusher.flush(false)); // after this turn, as LoadShard does
  }

  /**
   * LoadShard's write of its state: the held windows stored, sendable, and the watermark
   * flushes report moved past them; a row of its own unless it is a write counted elsewhere.
   */
  #storeHeld(ownRow: boolean): void {
    this.#pending.put(this.#held, ownRow ? 1 : 0);
    for (const [key, window] of this.#held) this.#flusher.stored(key, window);
    this.#held = [];
    this.#watermarkS = Math.max(this.#watermarkS, this.#closedThroughS);
  }

  #telemetry(): ShardTelemetry {
    return {
      region: this.a.shard.region,
      colo: `sim-${this.a.shard.region}`,
      invocations: this.#invocations,
      restarts: 0,
      subrequests: this.sent,
      peakInFlight: this.#peakInFlight,
      clockResolutionUs: this.#engine?.clockResolutionUs ?? null,
    };
  }
}
