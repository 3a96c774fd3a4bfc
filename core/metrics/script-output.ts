/**
 * What a k6 script said while it ran, beside what it measured: its uncaught iteration
 * errors (message and the script line the stack names, with counts), its console lines
 * (level, message and the first VU that printed it, with counts), the message of an
 * `exec.test.abort()` and that of an `exec.test.fail()`. k6 prints each of these as it happens; edgeload counts them per
 * window and step, where the requests are counted, so they travel with a window's stats
 * through the aggregators to the coordinator, into the live view and the summary.
 *
 * Bounded like MetricStats' error samples: MAX_SCRIPT_MESSAGES distinct errors and as many
 * distinct console lines, each at most MAX_MESSAGE_CHARS; the rest are counted only. A
 * script that prints a new line every iteration cannot grow a window, a flush or a summary.
 * Counts add up exactly under any merge order; which messages are kept past the bound
 * depends on the order, as for the error samples.
 */

/** Distinct errors, and distinct console lines, one ScriptOutput keeps. */
export const MAX_SCRIPT_MESSAGES = 10;
/** Longer messages are cut (a script may log a whole response body). */
export const MAX_MESSAGE_CHARS = 500;

/** k6's console levels: `console.log` is `info`, `console.warn` is `warning` (k6's logrus names). */
export const LOG_LEVELS = ["debug", "info", "warning", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ScriptError {
  readonly message: string;
  /** Where the script threw, `file.js:line`, when the stack names a line of the script. */
  readonly at: string | null;
  readonly count: number;
}

export interface ScriptLog {
  readonly level: LogLevel;
  readonly message: string;
  /** The lowest __VU that printed it (0: setup, teardown or the init context). */
  readonly vu: number;
  readonly count: number;
}

/** The wire and storage form (MetricStatsWire `y`); every field absent when empty. */
export interface ScriptOutputWire {
  readonly e?: ReadonlyArray<readonly [message: string, at: string | null, count: number]>;
  /** Errors counted past the bound. */
  readonly eo?: number;
  readonly l?: ReadonlyArray<readonly [level: LogLevel, message: string, vu: number, count: number]>;
  /** Console lines counted past the bound. */
  readonly lo?: number;
  /** The message of exec.test.abort(), when the script called it. */
  readonly a?: string;
  /** The message of exec.test.fail(), when the script called it: the run goes on, and ends failed. */
  readonly f?: string;
}

const cut = (message: string) => (message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message);

export class ScriptOutput {
  readonly #errors = new Map<string, { message: string; at: string | null; count: number }>();
  #moreErrors = 0;
  readonly #logs = new Map<string, { level: LogLevel; message: string; vu: number; count: number }>();
  #moreLogs = 0;
  /** The abort message (the first one kept when several VUs abort). */
  aborted: string | null = null;
  /** The exec.test.fail() message (the first one kept when several VUs or iterations call it). */
  markedFailed: string | null = null;

  /** Counts `n` uncaught errors with this message, thrown at `at`. */
  error(message: string, at: string | null, n = 1): void {
    const text = cut(message);
    const key = `${at ?? ""}\u0000${text}`;
    const known = this.#errors.get(key);
    if (known) known.count += n;
    else if (this.#errors.size < MAX_SCRIPT_MESSAGES) this.#errors.set(key, { message: text, at, count: n });
    else this.#moreErrors += n;
  }

  /** Counts `n` console lines with this level and message, printed by `vu` (the lowest kept). */
  log(level: LogLevel, message: string, vu: number, n = 1): void {
    const text = cut(message);
    const key = `${level}\u0000${text}`;
    const known = this.#logs.get(key);
    if (known) {
      known.count += n;
      known.vu = Math.min(known.vu, vu);
    } else if (this.#logs.size < MAX_SCRIPT_MESSAGES) this.#logs.set(key, { level, message: text, vu, count: n });
    else this.#moreLogs += n;
  }

  abort(message: string): void {
    this.aborted ??= cut(message);
  }

  /** Notes exec.test.fail(): the run is marked failed, and goes on (k6's MarkedAsFailed). */
  markFailed(message: string): void {
    this.markedFailed ??= cut(message);
  }

  /** Every error counted, kept or not. */
  get errorCount(): number {
    let n = this.#moreErrors;
    for (const e of this.#errors.values()) n += e.count;
    return n;
  }

  get logCount(): number {
    let n = this.#moreLogs;
    for (const l of this.#logs.values()) n += l.count;
    return n;
  }

  /** The kept errors, most frequent first. */
  errors(): ScriptError[] {
    return [...this.#errors.values()].map((e) => ({ ...e })).sort((a, b) => b.count - a.count || a.message.localeCompare(b.message));
  }

  /** The kept console lines in the order they were first printed. */
  logs(): ScriptLog[] {
    return [...this.#logs.values()].map((l) => ({ ...l }));
  }

  get isEmpty(): boolean {
    return (
      this.#errors.size === 0 && this.#moreErrors === 0 && this.#logs.size === 0 && this.#moreLogs === 0 && this.aborted === null && this.markedFailed === null
    );
  }

  merge(other: ScriptOutput): this {
    return this.mergeWire(other.toWire());
  }

  mergeWire(wire: ScriptOutputWire): this {
    for (const [message, at, count] of wire.e ?? []) this.error(message, at, count);
    this.#moreErrors += wire.eo ?? 0;
    for (const [level, message, vu, count] of wire.l ?? []) this.log(level, message, vu, count);
    this.#moreLogs += wire.lo ?? 0;
    if (wire.a !== undefined) this.abort(wire.a);
    if (wire.f !== undefined) this.markFailed(wire.f);
    return this;
  }

  toWire(): ScriptOutputWire {
    const out: {
      e?: Array<[string, string | null, number]>;
      eo?: number;
      l?: Array<[LogLevel, string, number, number]>;
      lo?: number;
      a?: string;
      f?: string;
    } = {};
    if (this.#errors.size) out.e = [...this.#errors.values()].map((e) => [e.message, e.at, e.count]);
    if (this.#moreErrors) out.eo = this.#moreErrors;
    if (this.#logs.size) out.l = [...this.#logs.values()].map((l) => [l.level, l.message, l.vu, l.count]);
    if (this.#moreLogs) out.lo = this.#moreLogs;
    if (this.aborted !== null) out.a = this.aborted;
    if (this.markedFailed !== null) out.f = this.markedFailed;
    return out;
  }
}
