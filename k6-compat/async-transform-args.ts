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
  /** The property key each argument is written as (`require(10)`: "10"), or null (see argumentKey). */
  readonly keys: readonly (string | null)[];
  constructor(positional: readonly Values[], spread: Values | null = null, spreadAt = Number.POSITIVE_INFINITY, keys: readonly (string | null)[] = []) {
    this.positional = positional;
    this.spread = spread;
    this.spreadAt = spreadAt;
    this.keys = keys;
  }
  /** The key argument `i` surely is, or null: not written as a literal, or a spread may fill its place. */
  keyAt(i: number): string | null {
    return this.spread && i >= this.spreadAt ? null : (this.keys[i] ?? null);
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
