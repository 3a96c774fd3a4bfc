import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WindowBook } from "./window-book.ts";

describe("WindowBook", () => {
  it("opens a window on first use and hands every window below a cut-off out once, oldest first", () => {
    const book = new WindowBook(() => ({ n: 0 }));
    for (const w of [5, 2, 9, 2, 3]) book.at(w).n++;
    expect(book.last).toBe(9);
    expect(book.takeBelow(5)).toEqual([
      [2, { n: 2 }],
      [3, { n: 1 }],
    ]);
    expect(book.takeBelow(5)).toEqual([]); // taken windows have left the book
    expect(book.takeBelow(Number.MAX_SAFE_INTEGER).map(([w]) => w)).toEqual([5, 9]);
    expect(book.last).toBe(-1);
  });

  it("loses and repeats nothing: whatever the cut-offs, every addition comes out exactly once", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 })), fc.array(fc.integer({ min: 0, max: 60 })), (adds, cutoffs) => {
        const book = new WindowBook<number[]>(() => []);
        adds.forEach((w, i) => book.at(w).push(i));
        const out = [...cutoffs, Number.MAX_SAFE_INTEGER].flatMap((c) => book.takeBelow(c).flatMap(([, ids]) => ids));
        expect(out.sort((a, b) => a - b)).toEqual(adds.map((_, i) => i));
      }),
    );
  });
});
