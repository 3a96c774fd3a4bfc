/**
 * Per-second windows kept open until they may close: one book for the shard (what it
 * measured, by step) and the coordinator (what the shards flushed, by region and step).
 * Both add to a window as data arrives and take every window below a cut-off, oldest
 * first, once nothing more can come for it; what the cut-off is stays each side's own
 * decision (the shard's close lag, the coordinator's `takeableBelow`).
 *
 * @example
 * const book = new WindowBook(() => ({ requests: 0 }));
 * book.at(3).requests++;
 * book.takeBelow(4); // → [[3, { requests: 1 }]], and window 3 has left the book
 */
export class WindowBook<Entry> {
  readonly #windows = new Map<number, Entry>();
  readonly #open: () => Entry;

  /** `open` makes a window's entry the first time something is added to it. */
  constructor(open: () => Entry) {
    this.#open = open;
  }

  /** The entry of window `windowS`, opened if it is not yet. */
  at(windowS: number): Entry {
    let entry = this.#windows.get(windowS);
    if (!entry) this.#windows.set(windowS, (entry = this.#open()));
    return entry;
  }

  /** The highest open window, or -1 when none is open. */
  get last(): number {
    let last = -1;
    for (const w of this.#windows.keys()) if (w > last) last = w;
    return last;
  }

  /** Removes and returns every window below `cutoff`, oldest first. */
  takeBelow(cutoff: number): Array<[windowS: number, entry: Entry]> {
    const taken: Array<[number, Entry]> = [];
    for (const [w, entry] of this.#windows) if (w < cutoff) taken.push([w, entry]);
    taken.sort((a, b) => a[0] - b[0]);
    for (const [w] of taken) this.#windows.delete(w);
    return taken;
  }
}
