/**
 * The closed model (k6's `constant-vus`, `ramping-vus`, `per-vu-iterations`,
 * `shared-iterations`): no pacer. One loop per VU this shard owns (core/schedule/vu-schedule.ts)
 * that is active now; a loop runs the flow back to back (its think time included) and
 * ends when the schedule no longer has its VU. A VU the ramp-down stops finishes its
 * iteration within `gracefulRampDown`; at the end of the last stage no iteration starts,
 * and those in progress finish within `gracefulStop` and are counted; past it they stop
 * (think time cut short, no new request, a request in flight cut and recorded nowhere):
 * core/schedule/graceful-stop.ts. An interrupted iteration is not counted, as in k6.
 * Schedule lag and corrected latency do not apply (there is no intended time: a VU waits
 * for its own previous request).
 *
 * The budget counts requests: once this invocation sent that many, loops start no new
 * iteration and the run hands off; the next invocation restarts the loops from the
 * schedule at its current time. The iteration-count executors stop a VU when its
 * iterations are done (its own count, or the shard's part of the shared count, taken as
 * VUs come free) and end the shard when every VU has stopped, maxDuration at the latest;
 * how far they got survives a handoff (`iterationProgress`, stored by the shard). After a
 * crash, iterations started since the last handoff may run again. What a crash loses is
 * counted by inFlightAt (workers/shard/restart-loss.ts).
 *
 * externally-controlled follows its shard's control level (shard-control.ts) instead of a
 * schedule: woken when it changes, it starts the VUs a scale-up adds at once; a VU that a
 * scale-down or a pause leaves out finishes its iteration and starts no other. Iterations
 * still running at the end are cut (k6 refuses a gracefulStop for this executor).
 */
import { WINDOW_MS } from "../../../core/run/protocol.ts";
import { ShardVus, VuSchedule, type VuProfile } from "../../../core/schedule/vu-schedule.ts";
import { gracefulStopOf, iterationStopMs } from "../../../core/schedule/graceful-stop.ts";
import { activeVus, profileLimits } from "../../../core/run/vu-control.ts";
import type { ShardControl } from "../shard-control.ts";
import type { IterationProgress, SliceEnd, SliceResult } from "../engine-types.ts";
import { type ExecutorHost, tickEnd } from "./host.ts";

export class VuExecutor {
  readonly #host: ExecutorHost;
  readonly #schedule: VuSchedule;
  readonly #shardVus: ShardVus;
  readonly #vuLoops = new Map<number, Promise<void>>();
  /** Iteration-count executors: VUs that have run their iterations (never restarted). */
  readonly #vusDone = new Set<number>();
  /** shared-iterations: this shard's iterations not yet started. */
  #sharedLeft = Infinity;
  /** per-vu-iterations: iterations each VU has started, across invocations. */
  readonly #vuIterations = new Map<number, number>();
  #vusStopping = false;
  #budget = Infinity;
  /** externally-controlled: the VUs active now, from the shard's control level (else null: the schedule's). */
  readonly #controlled: (() => number) | null;
  readonly #control: ShardControl | null;

  /**
   * `progress`: how far an iteration-count executor got before a handoff (else null);
   * `control`: an externally-controlled run's level (required for one).
   */
  constructor(host: ExecutorHost, vus: VuProfile, progress: IterationProgress | null, control: ShardControl | null = null) {
    this.#host = host;
    this.#schedule = new VuSchedule(vus);
    const limits = profileLimits(vus);
    if (limits && !control) throw new Error("an externally-controlled run needs its shard's control level");
    this.#control = limits ? control : null;
    this.#controlled = limits && control ? () => activeVus(control.levelOf(limits)) : null;
    this.#shardVus = new ShardVus(host.a.slice);
    if (vus.iterations?.kind === "shared") this.#sharedLeft = progress?.sharedLeft ?? this.#shardVus.sharedIterations(vus.iterations.count, vus.startVUs);
    for (const [vu, n] of progress?.perVu ?? []) this.#vuIterations.set(vu, n);
  }

  /**
   * The closed model: keeps a loop running for every owned VU the schedule has active,
   * waking at each change of the VU count, each window end and each request timeout.
   */
  async run(budget: number): Promise<SliceResult> {
    const host = this.#host;
    const a = host.a;
    const schedule = this.#schedule;
    const runEndMs = a.t0Ms + schedule.durationMs;
    this.#budget = budget;
    this.#control?.follow(() => host.wake());
    let end: SliceEnd;
    for (;;) {
      const now = host.clock.now();
      const ended = tickEnd(host, now);
      if (ended) {
        end = ended;
        break;
      }
      if (now >= runEndMs) {
        end = "finished";
        break;
      }
      if (host.requestsSent() >= budget) {
        end = "handoff";
        break;
      }
      const owned = this.#shardVus.owned(this.#activeAt(now - a.t0Ms));
      // Iteration-count executors end when every VU has run its iterations.
      if (schedule.profile.iterations && this.#vusDone.size >= owned.length) {
        end = "finished";
        break;
      }
      for (const vu of owned) {
        if (!this.#vuLoops.has(vu) && !this.#vusDone.has(vu)) this.#vuLoops.set(vu, this.#vuLoop(vu, runEndMs));
      }
      const untilChange = a.t0Ms + schedule.nextChangeAfter(now - a.t0Ms) - now;
      const untilWindowEnd = host.untilNextClose(now);
      const untilTimeout = host.nextTimeoutMs() - now;
      await host.sleep(Math.min(untilChange, untilWindowEnd, untilTimeout, a.deadlineMs - now, runEndMs - now));
      host.sweepTimeouts(host.clock.now());
    }
    this.#vusStopping = true;
    this.#control?.follow(null);
    host.sleepsEnded();
    // Iterations finish (a handoff lets them run their course; the run's end and the
    // deadline cut their think time) while timeouts are enforced and windows close.
    while (this.#vuLoops.size > 0) {
      const untilTimeout = Math.max(1, host.nextTimeoutMs() - host.clock.now());
      await Promise.race([Promise.all(this.#vuLoops.values()), host.clock.sleep(Math.min(untilTimeout, WINDOW_MS))]);
      const now = host.clock.now();
      host.sweepTimeouts(now);
      host.closeDue(now);
      if (now >= a.deadlineMs) host.wakeSleepers();
    }
    host.closeAll();
    return { end, cursor: 0, sent: host.requestsSent(), peakInFlight: host.peakInFlight() };
  }

  /** One VU: iterations back to back while the schedule keeps it active. */
  async #vuLoop(vu: number, runEndMs: number): Promise<void> {
    const host = this.#host;
    const a = host.a;
    const schedule = this.#schedule;
    const captured = new Map<string, string>();
    try {
      for (let iteration = 0; ; iteration++) {
        const now = host.clock.now();
        const t = now - a.t0Ms;
        if (host.requestsSent() >= this.#budget) {
          host.wake(); // the supervisor hands off now rather than at its next wake-up
          return;
        }
        if (this.#vusStopping || host.isStopped() || now >= runEndMs) return;
        if (this.#activeAt(t) <= vu) return; // ramped down (scaled down, paused)
        if (!this.#takeIteration(vu)) {
          this.#vusDone.add(vu);
          host.wake(); // the supervisor may end the run now
          return;
        }
        const hardStopMs =
          a.t0Ms +
          iterationStopMs({
            stopsAtMs: schedule.stopsAt(vu, t),
            durationMs: schedule.durationMs,
            gracefulRampDownMs: schedule.profile.gracefulRampDownMs,
            gracefulStopMs: gracefulStopOf(a.spec),
          });
        await host.startIteration({ global: iteration, shard: a.shard.index, region: a.shard.region, vu: vu + 1, captured }, hardStopMs);
      }
    } finally {
      this.#vuLoops.delete(vu);
    }
  }

  /**
   * After an unplanned restart: the iterations the dead instance had in flight at `atMs`,
   * taken as one per VU this shard owned that the schedule had active then. A VU loop runs
   * one iteration at a time and starts the next at once (think time is part of an
   * iteration), so that is what the dead loops had running; which of them were between two
   * requests died with the instance. Iteration-count executors lose none: their progress goes
   * back to the last handoff, so what the dead loops had started is started again.
   */
  inFlightAt(atMs: number): number {
    if (this.#schedule.profile.iterations) return 0;
    return this.#shardVus.owned(this.#activeAt(atMs - this.#host.a.t0Ms)).length;
  }

  /** VUs active at `tMs` after T0: the schedule's, or an externally-controlled run's level (its latest) within its duration. */
  #activeAt(tMs: number): number {
    if (!this.#controlled) return this.#schedule.activeAt(tMs);
    return tMs < 0 || tMs >= this.#schedule.durationMs ? 0 : this.#controlled();
  }

  /**
   * Iteration-count executors: how far they got, kept by the shard across a handoff so
   * the next invocation goes on rather than starting the counts again.
   */
  get iterationProgress(): IterationProgress | null {
    const count = this.#schedule.profile.iterations;
    if (!count) return null;
    return count.kind === "shared" ? { sharedLeft: this.#sharedLeft } : { perVu: [...this.#vuIterations] };
  }

  /** Iteration-count executors: whether VU `vu` may start another iteration (taking it). */
  #takeIteration(vu: number): boolean {
    const count = this.#schedule.profile.iterations;
    if (!count) return true;
    if (count.kind === "per-vu") {
      const done = this.#vuIterations.get(vu) ?? 0;
      if (done >= count.count) return false;
      this.#vuIterations.set(vu, done + 1);
      return true;
    }
    if (this.#sharedLeft <= 0) return false;
    this.#sharedLeft--;
    return true;
  }
}
