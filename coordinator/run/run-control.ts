/**
 * How a RunCoordinator controls an externally-controlled run (k6's `scale`, `pause`,
 * `resume`; PATCH /v1/runs/:id/control): it judges a request (core/run/vu-control.ts), keeps
 * the level in its storage before answering (so it survives the object's eviction), and
 * tells every shard the whole level; each shard keeps the newest it was told and derives its
 * own VUs from it (workers/shard/shard-control.ts).
 *
 * The coordinator calls each shard itself, in a run with an aggregation tree too (shards are
 * named by run and index): a level is one small message per shard and change, where the tree
 * is there for the flushes' fan-in. A shard that did not answer is told again at the next
 * ticks until it does (the level carries its version, so telling twice changes nothing); a
 * restarted coordinator tells every shard once more, not knowing who heard.
 */
import { activeVus, externalLimitsOf, initialControl, nextControl, type ControlRequest, type VuControl } from "../../core/run/vu-control.ts";
import type { RunView } from "../../core/run/protocol.ts";
import type { Problem } from "../../core/spec/input-problem.ts";
import type { RunRecord } from "./run-record.ts";
import { shardStub, type RunObjects } from "./run-shards.ts";

export type { ControlRequest } from "../../core/run/vu-control.ts";

const CONTROL_KEY = "control";
/** How long after a send that missed a shard the next tick tells it again. */
const RETELL_AFTER_MS = 1_000;

/** What a control request answers: the level now held and how many shards heard it, or why it was refused. */
export type ControlAnswer =
  | { readonly ok: true; readonly control: VuControl; readonly maxVUs: number; readonly shardsTold: number; readonly shards: number }
  | { readonly ok: false; readonly problems: readonly Problem[] };

export class RunControl {
  readonly #kv: SyncKvStorage;
  readonly #objects: () => RunObjects;
  /** Shards not known to hold the stored level; null: not worked out since this instance started. */
  #untold: Set<number> | null = null;
  #lastSendMs = -Infinity;
  #sending = false;

  constructor(kv: SyncKvStorage, objects: () => RunObjects) {
    this.#kv = kv;
    this.#objects = objects;
  }

  /** The run's level: the stored one, else its start level; null for a run that is not externally controlled. */
  levelOf(run: RunRecord): VuControl | null {
    const limits = externalLimitsOf(run.spec);
    return limits ? (this.#kv.get<VuControl>(CONTROL_KEY) ?? initialControl(limits)) : null;
  }

  /** `view` with an externally-controlled run's level: the VUs it has active now are the level's, not its plan's maxVUs. */
  shown<V extends RunView>(run: RunRecord, view: V): V {
    const level = this.levelOf(run);
    const limits = externalLimitsOf(run.spec);
    if (!level || !limits) return view;
    // Within the run only (the schedule's maxVUs): before T0 and after the end it says 0.
    const live = view.live.targetVUs ? { ...view.live, targetVUs: activeVus(level) } : view.live;
    return { ...view, live, control: { vus: level.vus, paused: level.paused, maxVUs: limits.maxVUs } };
  }

  /** The metrics' gauges (GET /v1/runs/:id/metrics, the push outputs) with the level's active VUs; an ended run's 0 stays. */
  gauged<M extends { readonly targetVUs: number | null }>(run: RunRecord, source: M): M {
    const level = this.levelOf(run);
    return level && source.targetVUs !== 0 && source.targetVUs !== null ? { ...source, targetVUs: activeVus(level) } : source;
  }

  /** Judges `request`, stores the new level and tells every shard, answering once each answered or failed. */
  async change(run: RunRecord, request: ControlRequest, nowMs: number): Promise<ControlAnswer> {
    const limits = externalLimitsOf(run.spec);
    const current = this.levelOf(run) ?? { vus: 0, paused: false, version: 0 };
    const status = { status: run.status, stopping: run.stopping !== null, pastDuration: nowMs >= run.t0Ms + run.spec.durationMs };
    const next = nextControl(current, request, limits, status);
    if (!next.ok) return next;
    this.#kv.put(CONTROL_KEY, next.control);
    this.#untold = new Set(run.plan.shards.map((s) => s.index));
    const shards = this.#untold.size;
    await this.#tell(run, next.control, nowMs);
    return { ok: true, control: next.control, maxVUs: limits!.maxVUs, shardsTold: shards - this.#untold.size, shards };
  }

  /**
   * At a tick of a running run: tells the stored level again to the shards that have not
   * answered it (all of them once after a restart, when a level was ever changed).
   */
  retellDue(run: RunRecord, nowMs: number): void {
    if (run.status !== "running" || this.#sending || nowMs - this.#lastSendMs < RETELL_AFTER_MS) return;
    const level = this.#kv.get<VuControl>(CONTROL_KEY);
    if (!level) return;
    this.#untold ??= new Set(run.plan.shards.map((s) => s.index));
    if (this.#untold.size === 0) return;
    void this.#tell(run, level, nowMs).catch((error: unknown) => console.warn(`run ${run.runId}: control level not told: ${String(error)}`));
  }

  /** Tells `level` to every untold shard at once; those that answer are told. */
  async #tell(run: RunRecord, level: VuControl, nowMs: number): Promise<void> {
    const untold = this.#untold!;
    const indexes = [...untold];
    this.#sending = true;
    this.#lastSendMs = nowMs;
    try {
      const answers = await Promise.allSettled(indexes.map((index) => shardStub(this.#objects().shards, run, index).control(level)));
      // A newer level may have been stored meanwhile: only an answer to the level still stored counts.
      const stored = this.#kv.get<VuControl>(CONTROL_KEY);
      if (stored?.version !== level.version) return;
      answers.forEach((answer, i) => {
        if (answer.status === "fulfilled") untold.delete(indexes[i]!);
      });
    } finally {
      this.#sending = false;
    }
  }
}
