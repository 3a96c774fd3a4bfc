/**
 * The fault schedules of `npm run bench -- chaos`: for each seed, 2–6 faults drawn from what
 * the fault table (../faults/) knows how to inject, each at a moment of a short run, so
 * that faults overlap as real outages do (an aggregator restarting while a shard's alarm
 * fires twice and D1 refuses writes). Pure and seeded: a seed names its schedule, so a
 * failure is reproduced by its seed alone, and shrunk by dropping faults from it.
 *
 * The bad target answer came later than the other kinds: it is drawn from a stream of its
 * own, so every seed kept the other faults it had (the seeds the search found failing
 * before, 74, 89, 123 and 172 flat and 1 tree, name the same schedules, plus at most it).
 * So are the kinds of issue 47 (`drawLateFaults`: the setup killed, R2 throwing, D1 away
 * for minutes), each from a stream of its own again.
 */

/**
 * The run every schedule is played over. Its setup is one step of `setupDelayMs` (the
 * target's /delay), so that the setup phase lasts long enough to be killed under it.
 * `resultWriteRetries` is the deployment's RESULT_WRITE_RETRIES (./vitest.config.ts): failed
 * ticks in a row before the coordinator gives a run up, 91 s of backoff at 8 (12, the
 * default, is 211 s), so that D1 away for 60–120 s ends either way, given up or finished.
 */
export const CHAOS_RUN = {
  ratePerS: 40,
  durationMs: 4_000,
  timeoutMs: 2_000,
  setupDelayMs: 800,
  resultWriteRetries: 8,
} as const;

/** Flat: two shards report to the coordinator. Tree: six shards in two regions, fan-in 2 (depth 2). */
export const SHAPES = { flat: { shards: 2 }, tree: { shards: 6 } } as const;
export type Shape = keyof typeof SHAPES;
export const REGIONS = ["wnam", "weur"] as const;

/** Who takes a flush in: the coordinator, or (tree only) a level-1 aggregator, `leaf` of the run's first ones. */
export type Receiver = { readonly kind: "coordinator" } | { readonly kind: "aggregator"; readonly leaf: 0 | 1 };

export type ChaosFault =
  /** The shard's memory gone mid-window, its storage kept (an eviction, a crash). */
  | { readonly kind: "shard-restart"; readonly shard: number; readonly atMs: number }
  /** The shard's alarm run a second time while its own runs. */
  | { readonly kind: "alarm-twice"; readonly shard: number; readonly atMs: number }
  /** The shard's next alarm moved `lateMs` later. */
  | { readonly kind: "alarm-late"; readonly shard: number; readonly atMs: number; readonly lateMs: number }
  | { readonly kind: "coordinator-restart"; readonly atMs: number }
  /** A level-1 aggregator (`leaf`) or a region's root restarted. */
  | { readonly kind: "aggregator-restart"; readonly which: "leaf-0" | "leaf-1" | "root"; readonly atMs: number }
  /** Every window the receiver has accepted so far delivered to it again. */
  | { readonly kind: "replay-accepted"; readonly receiver: Receiver; readonly atMs: number }
  /** The receiver refuses every flush from `atMs` to `untilMs` (`reorder`: then gets each flush's windows newest first). */
  | { readonly kind: "unreachable"; readonly receiver: Receiver; readonly atMs: number; readonly untilMs: number; readonly reorder: boolean }
  /** D1's windows table away from `atMs` to `untilMs`: 2–6 s. */
  | { readonly kind: "d1-refusing"; readonly atMs: number; readonly untilMs: number }
  /** The same for 60–120 s: past the run, and about the coordinator's give-up time (CHAOS_RUN.resultWriteRetries). */
  | { readonly kind: "d1-refusing-long"; readonly atMs: number; readonly untilMs: number }
  /** The seed set missing from R2 from before t0 to `untilMs` (the shards' first loads fail). */
  | { readonly kind: "r2-missing"; readonly atMs: number; readonly untilMs: number }
  /** R2 throwing on every read of the seed set from before the run is created to `untilMs`. */
  | { readonly kind: "r2-throwing"; readonly atMs: 0; readonly untilMs: number }
  /**
   * The coordinator restarted `intoSetupMs` after the run was created, while its setup step
   * runs (CHAOS_RUN.setupDelayMs): the run never starts. `atMs` 0: before t0.
   */
  | { readonly kind: "setup-killed"; readonly atMs: 0; readonly intoSetupMs: number }
  /** The run aborted through the API. */
  | { readonly kind: "abort"; readonly atMs: number }
  /** The target answers the run's requests badly from `atMs` to `untilMs` (its knobs, workers/target/knobs.ts). */
  | { readonly kind: "bad-target"; readonly answer: BadAnswer; readonly atMs: number; readonly untilMs: number };

/**
 * How the target answers badly: `500` an error status; `garbage` 200 with a body that is
 * not the document (the step's body check fails); `slow` past the run's timeout.
 */
export const BAD_ANSWERS = ["500", "garbage", "slow"] as const;
export type BadAnswer = (typeof BAD_ANSWERS)[number];

export type FaultKind = ChaosFault["kind"];

export interface ChaosSchedule {
  readonly seed: number;
  readonly shape: Shape;
  readonly faults: readonly ChaosFault[];
}

/** Kinds that touch something every run shares (a D1 table, an R2 object) or end the run: one of each at most. */
const ONCE: ReadonlySet<FaultKind> = new Set(["d1-refusing", "r2-missing", "abort", "bad-target"]);

/** Kinds that take D1's windows table away, and that take the seed set's R2 object: one of each family at most. */
export const D1_KINDS: ReadonlySet<FaultKind> = new Set(["d1-refusing", "d1-refusing-long"]);
export const R2_KINDS: ReadonlySet<FaultKind> = new Set(["r2-missing", "r2-throwing"]);

/** One seed in this many also has a bad target answer (when it drew fewer than six faults). */
const BAD_TARGET_ONE_IN = 3;

/** mulberry32: a small seeded generator, enough to draw schedules (not for cryptography). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The schedule of `seed` on `shape`: 2–6 faults, each at a moment of the run, in time order. */
export function drawSchedule(seed: number, shape: Shape): ChaosSchedule {
  const random = seededRandom(seed * 2 + (shape === "tree" ? 1 : 0));
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const shards = SHAPES[shape].shards;
  const { durationMs, timeoutMs } = CHAOS_RUN;
  const receivers: Receiver[] =
    shape === "tree" ? [{ kind: "coordinator" }, { kind: "aggregator", leaf: 0 }, { kind: "aggregator", leaf: 1 }] : [{ kind: "coordinator" }];
  const kinds: FaultKind[] = [
    "shard-restart",
    "alarm-twice",
    "alarm-late",
    "coordinator-restart",
    ...(shape === "tree" ? (["aggregator-restart", "aggregator-restart"] as const) : []),
    "replay-accepted",
    "unreachable",
    "d1-refusing",
    "r2-missing",
    "abort",
  ];
  const count = int(2, 6);
  const faults: ChaosFault[] = [];
  while (faults.length < count) {
    const kind = pick(kinds);
    if (ONCE.has(kind) && faults.some((f) => f.kind === kind)) continue;
    const atMs = int(3, Math.floor(durationMs / 100)) * 100;
    switch (kind) {
      case "shard-restart":
      case "alarm-twice":
        faults.push({ kind, shard: int(0, shards - 1), atMs });
        break;
      case "alarm-late":
        faults.push({ kind, shard: int(0, shards - 1), atMs, lateMs: int(10, 25) * 100 });
        break;
      case "coordinator-restart":
      case "abort":
        faults.push({ kind, atMs });
        break;
      case "aggregator-restart":
        faults.push({ kind, which: pick(["leaf-0", "leaf-1", "root"] as const), atMs });
        break;
      case "replay-accepted":
        faults.push({ kind, receiver: pick(receivers), atMs });
        break;
      case "unreachable":
        // Up to the shards' deadline, as the fault table's longest row.
        faults.push({ kind, receiver: pick(receivers), atMs, untilMs: atMs + int(10, (durationMs + timeoutMs - atMs) / 100) * 100, reorder: random() < 0.5 });
        break;
      case "d1-refusing":
        faults.push({ kind, atMs, untilMs: atMs + int(20, 60) * 100 });
        break;
      case "r2-missing":
        faults.push({ kind, atMs: 0, untilMs: int(5, 20) * 100 });
        break;
    }
  }
  const badTarget = drawBadTarget(seed, shape);
  if (badTarget && faults.length < 6) faults.push(badTarget);
  faults.push(...drawLateFaults(seed, shape, faults));
  return { seed, shape, faults: faults.sort((a, b) => a.atMs - b.atMs) };
}

/** The bad target answer of `seed` on `shape`, if it has one: from a stream of its own (see the header). */
function drawBadTarget(seed: number, shape: Shape): ChaosFault | null {
  const random = seededRandom((seed * 2 + (shape === "tree" ? 1 : 0)) ^ 0x5bd1e995);
  if (random() * BAD_TARGET_ONE_IN >= 1) return null;
  const answer = BAD_ANSWERS[Math.floor(random() * BAD_ANSWERS.length)]!;
  const atMs = (3 + Math.floor(random() * (CHAOS_RUN.durationMs / 100 - 2))) * 100;
  return { kind: "bad-target", answer, atMs, untilMs: atMs + (5 + Math.floor(random() * 16)) * 100 };
}

/**
 * One seed in this many has its setup killed (the run then never starts: a seed of ~35 s),
 * R2 throwing at the start, D1 away for minutes (a seed of up to ~2 min: rare, so the
 * bench's wall time stays near a few seconds a seed).
 */
const LATE_ONE_IN = { "setup-killed": 10, "r2-throwing": 8, "d1-refusing-long": 20 } as const;
/** Each late kind's stream (xor-ed into the seed), so that drawing one leaves the others as they were. */
const LATE_STREAM = { "setup-killed": 0xafd9d683, "r2-throwing": 0x3188ebcc, "d1-refusing-long": 0xd89193ea } as const;

/**
 * The kinds added after the search's seeds were kept (see the header), each drawn from a
 * stream of its own, while the schedule has fewer than six faults, and at most one fault
 * of the D1 family and of the R2 family.
 */
function drawLateFaults(seed: number, shape: Shape, drawn: readonly ChaosFault[]): ChaosFault[] {
  const late: ChaosFault[] = [];
  const has = (kinds: ReadonlySet<FaultKind>) => [...drawn, ...late].some((f) => kinds.has(f.kind));
  for (const kind of ["setup-killed", "r2-throwing", "d1-refusing-long"] as const) {
    const random = seededRandom((seed * 2 + (shape === "tree" ? 1 : 0)) ^ LATE_STREAM[kind]);
    const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
    if (random() * LATE_ONE_IN[kind] >= 1 || drawn.length + late.length >= 6) continue;
    if (kind === "setup-killed") late.push({ kind, atMs: 0, intoSetupMs: int(2, 5) * 100 });
    else if (kind === "r2-throwing" && !has(R2_KINDS)) late.push({ kind, atMs: 0, untilMs: int(5, 20) * 100 });
    else if (kind === "d1-refusing-long" && !has(D1_KINDS)) {
      const atMs = int(3, CHAOS_RUN.durationMs / 100) * 100;
      late.push({ kind, atMs, untilMs: atMs + int(600, 1200) * 100 });
    }
  }
  return late;
}

/** The schedule without its fault `index`: one step of shrinking. */
export function withoutFault(schedule: ChaosSchedule, index: number): ChaosSchedule {
  return { ...schedule, faults: schedule.faults.filter((_, i) => i !== index) };
}

function receiverName(r: Receiver): string {
  return r.kind === "coordinator" ? "coordinator" : `aggregator leaf-${r.leaf}`;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** A fault in words, as the table prints it: "shard 1 restarted at 2.3 s". */
export function describeFault(f: ChaosFault): string {
  switch (f.kind) {
    case "shard-restart":
      return `shard ${f.shard} restarted at ${s(f.atMs)}`;
    case "alarm-twice":
      return `shard ${f.shard}'s alarm twice at ${s(f.atMs)}`;
    case "alarm-late":
      return `shard ${f.shard}'s alarm ${s(f.lateMs)} late at ${s(f.atMs)}`;
    case "coordinator-restart":
      return `coordinator restarted at ${s(f.atMs)}`;
    case "aggregator-restart":
      return `aggregator ${f.which} restarted at ${s(f.atMs)}`;
    case "replay-accepted":
      return `${receiverName(f.receiver)} given its accepted windows again at ${s(f.atMs)}`;
    case "unreachable":
      return `${receiverName(f.receiver)} unreachable ${s(f.atMs)}–${s(f.untilMs)}${f.reorder ? ", then windows newest first" : ""}`;
    case "d1-refusing":
    case "d1-refusing-long":
      return `D1 refusing writes ${s(f.atMs)}–${s(f.untilMs)}`;
    case "r2-missing":
      return `R2 seed set missing until ${s(f.untilMs)}`;
    case "r2-throwing":
      return `R2 throwing on the seed set until ${s(f.untilMs)}`;
    case "setup-killed":
      return `coordinator restarted during setup, ${s(f.intoSetupMs)} after the run's creation`;
    case "abort":
      return `API abort at ${s(f.atMs)}`;
    case "bad-target":
      return `target answering ${f.answer === "500" ? "500s" : f.answer === "garbage" ? "garbage (200, not the document)" : "past the timeout"} ${s(f.atMs)}–${s(f.untilMs)}`;
  }
}

/** When the schedule's last fault is over (ms after t0). */
export function faultsOverAtMs(schedule: ChaosSchedule): number {
  return Math.max(0, ...schedule.faults.map((f) => ("untilMs" in f ? f.untilMs : f.kind === "alarm-late" ? f.atMs + f.lateMs : f.atMs)));
}
