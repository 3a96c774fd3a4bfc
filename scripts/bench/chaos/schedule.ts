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
 */

/** The run every schedule is played over. */
export const CHAOS_RUN = {
  ratePerS: 40,
  durationMs: 4_000,
  timeoutMs: 2_000,
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
  /** D1's windows table away from `atMs` to `untilMs`. */
  | { readonly kind: "d1-refusing"; readonly atMs: number; readonly untilMs: number }
  /** The seed set missing from R2 from before t0 to `untilMs` (the shards' first loads fail). */
  | { readonly kind: "r2-missing"; readonly atMs: number; readonly untilMs: number }
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
      return `D1 refusing writes ${s(f.atMs)}–${s(f.untilMs)}`;
    case "r2-missing":
      return `R2 seed set missing until ${s(f.untilMs)}`;
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
