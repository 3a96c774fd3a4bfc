/**
 * Which of a shard's own iterations its closed windows account for, as the cursor stored
 * with each closed window (and the few past it already accounted): a restart resumes from
 * there and counts everything else interrupted (dropped), including what it had sent in
 * the windows that died with it — never neither sent nor dropped, never twice.
 *
 * An iteration is accounted in the window where it was counted: dropped at the in-flight
 * cap (or skipped, or never started by the deadline) in the window of that moment; started
 * in the window its first request was counted sent, which is later than its start when it
 * waited for a connection slot; one that sent nothing in the window it ended in. Until
 * then it is pending, and the cursor cannot pass it.
 *
 * Why not the cursor as it stands at a window's close: a window closes up to
 * WINDOW_CLOSE_SPREAD_MS into the next second (windowCloseLagMs), when the shard has started that
 * second's iterations, a burst when catching up after a late start (chaos flat seed 123);
 * and with slow answers iterations wait for a slot across a close while later ones are
 * dropped at the cap (chaos tree seeds 45 and 69): a single number cannot say that, so the
 * iterations past the cursor already accounted are stored with it.
 */

interface Entry {
  /** Own iterations [from, to). */
  readonly from: number;
  readonly to: number;
  /** The window they were counted in; null while pending. */
  windowS: number | null;
}

/** Own iterations [from, to). */
export type IterationRange = readonly [number, number];

/** What the closed windows account for: every iteration below `cursor`, and the ranges `past` (above it). */
export interface Covered {
  readonly cursor: number;
  readonly past: readonly IterationRange[];
}

export class CursorMarks {
  /** In iteration order; the front is pruned once the closed windows account for it. */
  #entries: Entry[] = [];
  /** The pending entries, by iteration. */
  readonly #pending = new Map<number, Entry>();

  /** Iterations [from, to) were counted (dropped) in window `windowS` (-1: in a window closed before this engine). */
  counted(from: number, to: number, windowS: number): void {
    if (to > from) this.#entries.push({ from, to, windowS });
  }

  /** Iteration `k` started: pending until its first request is counted sent, or it ends. */
  started(k: number): void {
    const entry: Entry = { from: k, to: k + 1, windowS: null };
    this.#entries.push(entry);
    this.#pending.set(k, entry);
  }

  /** Iteration `k` was counted in window `windowS` (its first request sent, or it ended without one); later calls change nothing. */
  accounted(k: number, windowS: number): void {
    const entry = this.#pending.get(k);
    if (!entry) return;
    entry.windowS = windowS;
    this.#pending.delete(k);
  }

  /** What the windows below `closedThrough` account for; `current` (the next iteration to consider) when they account for everything. */
  coveredBy(closedThrough: number, current: number): Covered {
    const closed = (e: Entry) => e.windowS !== null && e.windowS < closedThrough;
    let first = 0;
    while (first < this.#entries.length && closed(this.#entries[first]!)) first++;
    if (first) this.#entries = this.#entries.slice(first);
    const front = this.#entries[0];
    if (!front) return { cursor: current, past: [] };
    // As ranges, adjacent ones joined: a run of drops at the cap is one.
    const past: Array<[number, number]> = [];
    for (const e of this.#entries) {
      if (!closed(e)) continue;
      const last = past.at(-1);
      if (last && last[1] === e.from) last[1] = e.to;
      else past.push([e.from, e.to]);
    }
    return { cursor: front.from, past };
  }
}

/** [from, to) less the ranges `accounted`, as ranges: what a resuming shard counts interrupted. */
export function unaccountedRanges(from: number, to: number, accounted: readonly IterationRange[]): IterationRange[] {
  const ranges: IterationRange[] = [];
  let start = from;
  for (const [a, b] of [...accounted].sort((x, y) => x[0] - y[0])) {
    if (b <= start || a >= to) continue;
    if (a > start) ranges.push([start, a]);
    start = Math.max(start, b);
  }
  if (to > start) ranges.push([start, to]);
  return ranges;
}
