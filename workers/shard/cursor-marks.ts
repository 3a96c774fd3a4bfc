/**
 * The cursor a closed window covers: where the shard's cursor stood when the first of the
 * windows still open began to take iterations in. The shard stores that cursor with each
 * closed window, so a restart resumes from what its stored windows count and counts
 * everything after it interrupted (dropped), including what it had sent in the windows that
 * died with it — never neither sent nor dropped.
 *
 * Why not the cursor as it stands at the close: a window closes up to CLOSE_SPREAD_MS into
 * the next second (shard-windows.ts), when the shard has already started that second's
 * iterations; after a late start it starts a whole burst there (catching up). A restart
 * then lost them from the ledger (chaos flat seed 123: 40 of 160 neither sent nor dropped).
 *
 * An iteration belongs to the second it was started (or dropped) in; one that waited for a
 * connection slot past the second's end is counted sent in the next, and is covered one
 * window early.
 */
export class CursorMarks {
  /** Per second in which the cursor moved, oldest first: the cursor before its first move there. */
  #marks: Array<{ readonly windowS: number; readonly cursor: number }> = [];

  /** The cursor moves on from `from` in second `windowS` (an iteration started, dropped or skipped there). */
  moving(windowS: number, from: number): void {
    const last = this.#marks.at(-1);
    if (!last || windowS > last.windowS) this.#marks.push({ windowS, cursor: from });
  }

  /** The cursor the windows below `closedThrough` cover; `current` when nothing moved since. */
  coveredBy(closedThrough: number, current: number): number {
    let first = 0;
    while (first < this.#marks.length && this.#marks[first]!.windowS < closedThrough) first++;
    if (first) this.#marks = this.#marks.slice(first);
    return this.#marks[0]?.cursor ?? current;
  }
}
