/**
 * The read cache of the records API's second build (`/app/v2/records`, records.ts): an LRU
 * of a few hundred records per isolate whose entries expire after a TTL, with one load per
 * key at a time (concurrent misses of a hot key share one database read).
 *
 * What it promises, honestly: an isolate sees its own writes at once (a write replaces or
 * drops the entry, and a read that was in flight during the write is not cached), but
 * writes made through other isolates are invisible until the entry expires, `ttlMs` after
 * it was loaded. A deployed Worker runs many isolates, so v2 readers may see a value up to
 * `ttlMs` old; the local target runs one isolate, where v2 is never stale.
 *
 * Pure: no I/O and no clock — callers pass `nowMs` and the loader.
 *
 * @example
 * const cache = new RecordCache<Row>({ capacity: 512, ttlMs: 1000 });
 * const { value, lookup } = await cache.read("key-1", Date.now(), () => selectRow("key-1"));
 */

export interface RecordCacheOptions {
  /** Entries kept; the least recently read goes first. */
  readonly capacity: number;
  /** How long a loaded entry answers reads. */
  readonly ttlMs: number;
}

/** How a read was answered: from the cache, by joining a load in flight, or by a new load. */
export type Lookup = "hit" | "coalesced" | "miss";

interface Entry<V> {
  readonly value: V;
  readonly loadedAtMs: number;
}

interface Load<V> {
  readonly promise: Promise<V | null>;
  /** Set when the key was written during the load: its result answers its readers but is not cached. */
  superseded: boolean;
}

/** Values carry the version of their write, so a late answer cannot replace a newer value. */
export class RecordCache<V extends { readonly version: number }> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #loads = new Map<string, Load<V>>();
  readonly #lookups: Record<Lookup, number> = { hit: 0, coalesced: 0, miss: 0 };

  readonly options: RecordCacheOptions;

  constructor(options: RecordCacheOptions) {
    this.options = options;
  }

  /** Reads answered each way since the isolate started. */
  get lookups(): Readonly<Record<Lookup, number>> {
    return this.#lookups;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The key's value from the cache while fresh, else from `load` (null: absent, not cached). */
  async read(key: string, nowMs: number, load: () => Promise<V | null>): Promise<{ value: V | null; lookup: Lookup }> {
    const entry = this.#entries.get(key);
    if (entry && nowMs - entry.loadedAtMs < this.options.ttlMs) {
      // Map order is insertion order: re-inserting makes this the most recently used.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      return this.#count({ value: entry.value, lookup: "hit" });
    }
    if (entry) this.#entries.delete(key);
    const inFlight = this.#loads.get(key);
    if (inFlight) return this.#count({ value: await inFlight.promise, lookup: "coalesced" });

    const started: Load<V> = { promise: load(), superseded: false };
    this.#loads.set(key, started);
    try {
      const value = await started.promise;
      // Stamped with the time the load began: the entry never claims to be fresher than it is.
      if (value !== null && !started.superseded) this.#store(key, { value, loadedAtMs: nowMs });
      return this.#count({ value, lookup: "miss" });
    } finally {
      if (this.#loads.get(key) === started) this.#loads.delete(key);
    }
  }

  /**
   * A write through this isolate: the new value (or null when deleted) replaces what was
   * cached, unless two writes of the key answered out of order and a newer one is cached.
   */
  written(key: string, value: V | null, nowMs: number): void {
    this.#supersede(key);
    const cached = this.#entries.get(key);
    if (value !== null && cached && cached.value.version > value.version) return;
    this.#entries.delete(key);
    if (value !== null) this.#store(key, { value, loadedAtMs: nowMs });
  }

  /** Writes to every key with this prefix (bulk create, delete by prefix): forget them all. */
  invalidatePrefix(prefix: string): void {
    for (const key of [...this.#loads.keys()]) if (key.startsWith(prefix)) this.#supersede(key);
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.#entries.delete(key);
  }

  #supersede(key: string): void {
    const load = this.#loads.get(key);
    if (!load) return;
    load.superseded = true;
    this.#loads.delete(key);
  }

  #store(key: string, entry: Entry<V>): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.options.capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  #count<T extends { lookup: Lookup }>(result: T): T {
    this.#lookups[result.lookup]++;
    return result;
  }
}
