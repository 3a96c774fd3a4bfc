/**
 * The arguments of one call, as the async rewrite's flow analysis (async-transform-flow.ts)
 * passes them on: a set of values per position, and a spread argument's elements, which
 * may fill any position from its own on.
 */
import { EMPTY, type Values } from "./async-transform-values.ts";

export class Args {
  readonly positional: readonly Values[];
  readonly spread: Values | null;
  readonly spreadAt: number;
  constructor(positional: readonly Values[], spread: Values | null = null, spreadAt = Number.POSITIVE_INFINITY) {
    this.positional = positional;
    this.spread = spread;
    this.spreadAt = spreadAt;
  }
  at(i: number): Values {
    const own = this.positional[i] ?? (EMPTY as Values);
    return this.spread && i >= this.spreadAt ? new Set([...own, ...this.spread]) : own;
  }
  #all: Values | null = null;
  /** Arguments `i` and after (a rest parameter's). */
  from(i: number): Values {
    if (i === 0 && this.#all) return this.#all;
    const out: Values = new Set(this.spread ?? EMPTY);
    for (let j = i; j < this.positional.length; j++) for (const t of this.positional[j]!) out.add(t);
    if (i === 0) this.#all = out;
    return out;
  }
  all(): Values {
    return this.from(0);
  }
}
