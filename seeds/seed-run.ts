/**
 * What every seeder's run shares apart from the provider: its options (count, concurrency,
 * progress, checkpoint), the checkpoint that makes it resumable without making anything
 * twice, and the `metadata` block of the document it writes.
 *
 * A run fills numbered slots (slot i is the i-th entry; which user it belongs to follows
 * from i alone). The checkpoint is a JSON file holding the slots made so far; it is written
 * atomically (temporary file + rename, mode 0600: the entries are credentials) every
 * SAVE_EVERY entries and when the run fails, and removed when the run succeeds. A run
 * started with an existing checkpoint makes only the empty slots. A checkpoint is bound to
 * the kind, provider, client, count and user spread it was made for; any other run refuses
 * it rather than mixing two sets.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { SeedKind } from "../core/data/seed-set.ts";
import { pool, SeedError, type Provider } from "./provider-api.ts";

export interface SeedRunOptions {
  /** Entries to make. */
  readonly count: number;
  /** Requests to the provider at once (default 20). */
  readonly concurrency?: number;
  /** `metadata.test_name` (default `edgeload <kind>`). */
  readonly testName?: string;
  /** A checkpoint file: resumed from when it exists, removed after success. */
  readonly checkpoint?: string;
  readonly onProgress?: (done: number, total: number, phase: string) => void;
  /** Called once when a checkpoint is resumed: `made` of `total` slots of `phase` exist already. */
  readonly onResume?: (made: number, total: number, phase: string) => void;
}

/** The `metadata` block of every seed document edgeload writes (core/data/seed-set.ts parses the rest). */
export interface SeedMetadata {
  readonly version: 1;
  readonly kind: SeedKind;
  readonly test_name: string;
  readonly generated_at: string;
  readonly base_url: string;
  readonly client_id?: string;
  readonly total: number;
}

export function seedMetadata<X extends object>(kind: SeedKind, provider: Provider, o: SeedRunOptions, total: number, extra: X): SeedMetadata & X {
  return {
    version: 1,
    kind,
    test_name: o.testName ?? `edgeload ${kind}`,
    generated_at: new Date().toISOString(),
    base_url: provider.base,
    ...(provider.clientId === undefined ? {} : { client_id: provider.clientId }),
    total,
    ...extra,
  };
}

/** Entries made between two checkpoint writes. */
export const SAVE_EVERY = 50;

/** What a checkpoint was made for; a run for anything else refuses it. */
export interface CheckpointScope {
  readonly kind: SeedKind;
  readonly baseUrl: string;
  readonly clientId: string | null;
  /** Slots in the run. */
  readonly slots: number;
  /** Users the slots are spread over. */
  readonly users: number;
}

interface CheckpointFile<E> {
  readonly version: 1;
  readonly kind: SeedKind;
  readonly base_url: string;
  readonly client_id: string | null;
  readonly slots: number;
  readonly users: number;
  readonly saved_at: string;
  readonly made: ReadonlyArray<E | null>;
}

export class Checkpoint<E> {
  readonly #path: string | undefined;
  readonly #scope: CheckpointScope;
  readonly #made: Array<E | null>;
  #unsaved = 0;
  #writing: Promise<void> = Promise.resolve();

  private constructor(path: string | undefined, scope: CheckpointScope, made: Array<E | null>) {
    this.#path = path;
    this.#scope = scope;
    this.#made = made;
  }

  /**
   * The checkpoint at `path` (or an empty one, also when there is no path); reports a
   * resumed one through `onResume` under `phase`.
   */
  static async open<E>(path: string | undefined, scope: CheckpointScope, o: SeedRunOptions, phase: string): Promise<Checkpoint<E>> {
    const empty = () => new Checkpoint<E>(path, scope, new Array<E | null>(scope.slots).fill(null));
    if (path === undefined) return empty();
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return empty();
      throw new SeedError("checkpoint", `cannot read ${path} (${(error as Error).message})`);
    }
    let file: CheckpointFile<E>;
    try {
      file = JSON.parse(text) as CheckpointFile<E>;
    } catch {
      throw new SeedError("checkpoint", `${path} is not JSON; remove it to start afresh`);
    }
    const same =
      file.version === 1 &&
      file.kind === scope.kind &&
      file.base_url === scope.baseUrl &&
      file.client_id === scope.clientId &&
      file.slots === scope.slots &&
      file.users === scope.users &&
      Array.isArray(file.made) &&
      file.made.length === scope.slots;
    if (!same) {
      throw new SeedError(
        "checkpoint",
        `${path} belongs to another run (${file.kind} ×${file.slots} over ${file.users} users at ${file.base_url}); ` +
          `remove it to start afresh, or seed under another name`,
      );
    }
    const checkpoint = new Checkpoint<E>(path, scope, [...file.made]);
    if (checkpoint.made > 0) o.onResume?.(checkpoint.made, scope.slots, phase);
    return checkpoint;
  }

  /** Slots filled. */
  get made(): number {
    return this.#made.reduce((n, e) => (e === null ? n : n + 1), 0);
  }

  get slots(): number {
    return this.#made.length;
  }

  /** The empty slots, in order. */
  missing(): number[] {
    return this.#made.flatMap((e, slot) => (e === null ? [slot] : []));
  }

  /** Every entry, in slot order; only once every slot is filled. */
  entries(): E[] {
    if (this.#made.some((e) => e === null)) throw new Error("the run has empty slots");
    return this.#made as E[];
  }

  /** Fills a slot; every SAVE_EVERY entries the checkpoint is written. */
  async record(slot: number, entry: E): Promise<void> {
    this.#made[slot] = entry;
    if (++this.#unsaved >= SAVE_EVERY) await this.save();
  }

  /** Writes the checkpoint atomically (writes are queued, each writes the latest state). */
  save(): Promise<void> {
    const path = this.#path;
    if (path === undefined) return Promise.resolve();
    this.#unsaved = 0;
    this.#writing = this.#writing.then(async () => {
      const s = this.#scope;
      const file: CheckpointFile<E> = {
        version: 1,
        kind: s.kind,
        base_url: s.baseUrl,
        client_id: s.clientId,
        slots: s.slots,
        users: s.users,
        saved_at: new Date().toISOString(),
        made: this.#made,
      };
      const temporary = `${path}.${process.pid}.tmp`;
      await mkdir(dirname(path), { recursive: true });
      await writeFile(temporary, JSON.stringify(file), { mode: 0o600 });
      await chmod(temporary, 0o600); // in case a crashed run left the temporary file with other rights
      await rename(temporary, path);
    });
    return this.#writing;
  }

  /** Removes the checkpoint once the run has succeeded. */
  async remove(): Promise<void> {
    await this.#writing.catch(() => {});
    if (this.#path !== undefined) await rm(this.#path, { force: true });
  }

  /**
   * Fills the empty slots with `make`, at most `concurrency` at a time, reporting progress
   * under `phase`; on failure the checkpoint is written with everything made (if anything
   * was) before the error is passed on.
   * @returns every entry, in slot order
   */
  async fill(o: SeedRunOptions, phase: string, make: (slot: number) => Promise<E>): Promise<E[]> {
    const progress = o.onProgress ?? (() => {});
    let done = this.made;
    try {
      await pool(this.missing(), o.concurrency ?? 20, async (slot) => {
        await this.record(slot, await make(slot));
        progress(++done, this.slots, phase);
      });
    } catch (error) {
      if (this.made > 0) await this.save();
      throw error;
    }
    return this.entries();
  }
}
