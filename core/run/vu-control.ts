/**
 * The control of an externally-controlled run (k6's `externally-controlled` executor, driven
 * by `k6 scale --vus N`, `k6 pause` and `k6 resume`): the level the user sets while it runs,
 * how a request to change it is read and judged, and which VUs a shard runs under it.
 *
 * The RunCoordinator keeps the level (coordinator/run/run-control.ts) and sends it whole to
 * every shard; each shard derives its own VUs from it with its slice of the weights, as a
 * constant-vus shard does from `vus` (core/schedule/vu-schedule.ts ShardVus), so the shards'
 * VUs sum to the level. A `version` orders the levels: a shard keeps the newest it was told,
 * whatever order the messages arrive in. Pure: times are passed in.
 *
 * @example
 * const level = initialControl({ startVUs: 1, maxVUs: 5 });          // { vus: 1, paused: false, version: 0 }
 * const asked = parseControlRequest({ vus: 3 });                        // { ok: true, value: { vus: 3 } }
 * nextControl(level, asked.value, { startVUs: 1, maxVUs: 5 }, "running") // { ok: true, control: { vus: 3, paused: false, version: 1 } }
 */
import type { Problem } from "../spec/input-problem.ts";
import type { RunSpec } from "../spec/types.ts";
import { ShardVus, type VuProfile } from "../schedule/vu-schedule.ts";
import type { ShardSlice } from "../schedule/shard-slice.ts";
import type { RunStatus } from "./protocol.ts";

/** The level an externally-controlled run runs at. */
export interface VuControl {
  /** VUs active when not paused (k6's `vus`), 0 … maxVUs. */
  readonly vus: number;
  /** Paused: no iteration starts; those in progress finish (k6's pause). */
  readonly paused: boolean;
  /** 0 for the run's own start level; each change adds one. */
  readonly version: number;
}

/** What a control request asks: a new level, a pause or a resume, or both. */
export interface ControlRequest {
  readonly vus?: number;
  readonly paused?: boolean;
}

/** The executor's limits, from the run's spec. */
export interface ExternalLimits {
  readonly startVUs: number;
  readonly maxVUs: number;
}

export type ControlResult = { ok: true; control: VuControl } | { ok: false; problems: Problem[] };

/**
 * The limits of `spec` when it is externally controlled (on its own, or as the one scenario
 * of a run of named scenarios: k6 runs it alone), else null.
 */
export function externalLimitsOf(spec: RunSpec): ExternalLimits | null {
  const only = spec.scenarios?.length === 1 ? spec.scenarios[0]!.spec : spec;
  return only.vus ? profileLimits(only.vus) : null;
}

/** The limits of an externally-controlled VU profile (its stages hold maxVUs), else null. */
export function profileLimits(profile: VuProfile): ExternalLimits | null {
  const external = profile.externallyControlled;
  return external ? { startVUs: external.startVUs, maxVUs: profile.startVUs } : null;
}

/** The level a run starts at: its `vus`, running. */
export function initialControl(limits: ExternalLimits): VuControl {
  return { vus: limits.startVUs, paused: false, version: 0 };
}

/** The VUs active under `control`: none while paused. */
export function activeVus(control: VuControl): number {
  return control.paused ? 0 : control.vus;
}

/** The global numbers of the VUs one shard runs under `control` (its slice of the weights). */
export function shardVusUnder(slice: ShardSlice, control: VuControl): number[] {
  return new ShardVus(slice).owned(activeVus(control));
}

const REQUEST_FIELDS = new Set(["vus", "paused"]);

/** A control request's body, every problem named: `{"vus": N}` and/or `{"paused": true|false}`. */
export function parseControlRequest(body: unknown): { ok: true; value: ControlRequest } | { ok: false; problems: Problem[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, problems: [{ field: "body", detail: 'a JSON object: {"vus": N} and/or {"paused": true|false}' }] };
  }
  const fields = body as Record<string, unknown>;
  const problems: Problem[] = [];
  for (const key of Object.keys(fields)) if (!REQUEST_FIELDS.has(key)) problems.push({ field: key, detail: "not a control field (vus, paused)" });
  const { vus, paused } = fields;
  if (vus !== undefined && !(typeof vus === "number" && Number.isInteger(vus) && vus >= 0)) {
    problems.push({ field: "vus", detail: `must be a whole number of VUs, 0 or more; got ${JSON.stringify(vus)}` });
  }
  if (paused !== undefined && typeof paused !== "boolean") problems.push({ field: "paused", detail: `must be true or false; got ${JSON.stringify(paused)}` });
  if (vus === undefined && paused === undefined && problems.length === 0) {
    problems.push({ field: "body", detail: 'nothing to change: give "vus", "paused" or both' });
  }
  if (problems.length) return { ok: false, problems };
  return { ok: true, value: { ...(vus !== undefined ? { vus: vus as number } : {}), ...(paused !== undefined ? { paused: paused as boolean } : {}) } };
}

/**
 * The level after `request`, or why it is refused: the run is not externally controlled
 * (`limits` null), not running (still starting, or ended or ending), past its duration, or
 * the VUs are above its maxVUs (k6's `scale` refuses them too).
 */
export function nextControl(
  current: VuControl,
  request: ControlRequest,
  limits: ExternalLimits | null,
  run: { readonly status: RunStatus; readonly stopping: boolean; readonly pastDuration: boolean },
): ControlResult {
  if (!limits) return refuse("executor", "the run is not externally-controlled: only an externally-controlled run can be scaled, paused or resumed");
  if (run.status === "pending") return refuse("status", "the run has not started yet: wait until it is running");
  if (run.status !== "running" || run.stopping) return refuse("status", `the run has ended or is ending (${run.status}): nothing to control`);
  if (run.pastDuration) return refuse("status", "the run's duration is over: nothing to control");
  if (request.vus !== undefined && request.vus > limits.maxVUs) {
    return refuse("vus", `must be at most the run's maxVUs (${limits.maxVUs}); got ${request.vus}`);
  }
  return { ok: true, control: { vus: request.vus ?? current.vus, paused: request.paused ?? current.paused, version: current.version + 1 } };
}

const refuse = (field: string, detail: string): ControlResult => ({ ok: false, problems: [{ field, detail }] });

/** The newer of two levels (a shard told them out of order keeps the newest). */
export function newerControl(held: VuControl | null, told: VuControl): VuControl {
  return held && held.version >= told.version ? held : told;
}
