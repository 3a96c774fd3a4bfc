/**
 * A shard's browser: one Browser Run session per shard, kept across its alarms. k6 starts a
 * browser per iteration; Browser Run allows an account about one new browser a second, so a
 * shard acquires one session (with keep_alive, so it outlives the gap between two alarms),
 * keeps its id in the object's storage, and connects to it again in each alarm; each
 * iteration opens a context of its own in it (browser-host.ts).
 *
 * A connection never outlives the alarm that opened it (`endInvocation`): the next alarm,
 * in this instance or in one started after an eviction, connects with the stored id. A
 * session that is gone (keep_alive ran out, the browser crashed, the platform closed it) is
 * replaced by a new one, whose id replaces the stored one. The last alarm closes it: an idle
 * session is billed until its keep_alive ends.
 *
 * A new session is acquired no earlier than the shard's turn (`notBeforeMs`: its t0 plus the
 * planner's browserStartMs), so a run's shards do not ask Browser Run for more new browsers a
 * second than the account allows. Until then the first browser call of each iteration waits,
 * as a k6 iteration waits for its browser to launch: a VU's iteration goes on when the
 * browser is ready, and an arrival-rate scenario's iterations hold their VUs meanwhile, so
 * the ones due when every VU is waiting are dropped and counted in dropped_iterations.
 */
import { acquire, connect, type Browser, type BrowserContext, type BrowserContextOptions } from "@cloudflare/playwright";
import type { BrowserIdentity } from "../../k6-compat/runtime/browser-wire.ts";

/** Where the session's id is stored in the shard's storage. */
export const BROWSER_SESSION_KEY = "browserSession";

/**
 * How long Browser Run keeps the session without a connection: the most it allows (10 min;
 * `WorkersLaunchOptions.keep_alive`), as a shard may pause between alarms for a restart.
 */
export const KEEP_ALIVE_MS = 600_000;

/** The part of a Durable Object's synchronous storage (ctx.storage.kv) the owner uses. */
export interface SessionStore {
  get<T>(key: string): T | undefined;
  put<T>(key: string, value: T): void;
  delete(key: string): boolean;
}

/** The clock the owner waits for its turn by (the engine's: workers/shard/engine-types.ts systemClock). */
export interface SessionClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** When a new session may be acquired (epoch ms), and the clock to wait by. */
export interface SessionTurn {
  readonly notBeforeMs: number;
  readonly clock: SessionClock;
}

/** What the owner did to get a browser: for tests and the shard's log. */
export type SessionEvent = "acquired" | "reconnected" | "replaced";

export class ShardBrowser {
  readonly #binding: Fetcher;
  readonly #store: SessionStore;
  readonly #onEvent: (event: SessionEvent, sessionId: string) => void;
  readonly #turn: SessionTurn | null;
  #browser: Browser | null = null;
  /** Its user agent and version, read when it was connected (k6's browser.userAgent(), version()). */
  #identity: BrowserIdentity | null = null;
  /** Ends a wait for the turn early: the invocation ended first (endInvocation). */
  #cancelWait: (() => void) | null = null;
  /** The connection being made, shared by the iterations that ask at once. */
  #connecting: Promise<Browser> | null = null;

  /** `turn`: a new session is acquired no earlier than it (absent: at the first call). */
  constructor(binding: Fetcher, store: SessionStore, onEvent: (event: SessionEvent, sessionId: string) => void = () => {}, turn: SessionTurn | null = null) {
    this.#binding = binding;
    this.#store = store;
    this.#onEvent = onEvent;
    this.#turn = turn;
  }

  /** The stored session's id, or null before the first acquire. */
  get sessionId(): string | null {
    return this.#store.get<string>(BROWSER_SESSION_KEY) ?? null;
  }

  /** The browser's user agent without "Headless" and its version, as k6 gives them (k6-compat/runtime/browser-wire.ts BrowserIdentity). */
  async identity(): Promise<BrowserIdentity> {
    const browser = await this.browser();
    if (this.#browser === browser && this.#identity) return this.#identity;
    return readIdentity(browser);
  }

  /** A connected browser: this alarm's connection, else the stored session reconnected, else a new session. */
  browser(): Promise<Browser> {
    if (this.#browser?.isConnected()) return Promise.resolve(this.#browser);
    this.#connecting ??= this.#connect(this.sessionId).finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  /**
   * A new context (one per iteration) in the shard's browser. A session that died since
   * its connection was made answers the connection and then closes it: that browser is
   * dropped and a new session replaces the stored one, once.
   */
  async newContext(options?: BrowserContextOptions): Promise<BrowserContext> {
    const browser = await this.browser();
    try {
      return await browser.newContext(options);
    } catch (error) {
      if (browser.isConnected()) throw error;
      const lost = this.sessionId;
      if (this.#browser === browser) this.#browser = null;
      this.#connecting ??= this.#connect(null, lost).finally(() => (this.#connecting = null));
      return (await this.#connecting).newContext(options);
    }
  }

  /** Connects to `stored` when it is alive, else acquires a session that replaces `replacing` (or `stored`). */
  async #connect(stored: string | null, replacing: string | null = stored): Promise<Browser> {
    if (stored !== null) {
      try {
        this.#browser = await connect(this.#binding, stored);
        this.#identity = await readIdentity(this.#browser);
        this.#onEvent("reconnected", stored);
        return this.#browser;
      } catch {
        // The session is gone: a new one replaces it below.
      }
    }
    // A replacement too is a new browser to the account: it waits for the turn (long past by then).
    await this.#waitForTurn();
    const { sessionId } = await acquire(this.#binding, { keep_alive: KEEP_ALIVE_MS });
    this.#store.put(BROWSER_SESSION_KEY, sessionId);
    this.#browser = await connect(this.#binding, sessionId);
    this.#identity = await readIdentity(this.#browser);
    this.#onEvent(replacing === null ? "acquired" : "replaced", sessionId);
    return this.#browser;
  }

  /** Waits until the shard's turn to acquire; throws when the invocation ends first, so no browser is acquired only to be closed. */
  async #waitForTurn(): Promise<void> {
    const turn = this.#turn;
    const waitMs = turn ? turn.notBeforeMs - turn.clock.now() : 0;
    if (!turn || waitMs <= 0) return;
    const cancelled = new Promise<"cancelled">((resolve) => (this.#cancelWait = () => resolve("cancelled")));
    const ended = await Promise.race([turn.clock.sleep(waitMs), cancelled]);
    this.#cancelWait = null;
    if (ended === "cancelled") throw new Error("the shard's invocation ended while its browser waited for its turn (the account's new-browser rate)");
  }

  /**
   * The alarm is over: its connection is closed, the session kept for the next (a browser
   * from `connect` closes only its connection). `final`: the shard is done, the session
   * ends too, and its id is forgotten.
   */
  async endInvocation(final: boolean): Promise<void> {
    this.#cancelWait?.();
    const browser = this.#browser ?? (this.#connecting ? await this.#connecting.catch(() => null) : null);
    this.#browser = null;
    await browser?.close().catch(() => {});
    const sessionId = this.sessionId;
    if (!final || sessionId === null) return;
    this.#store.delete(BROWSER_SESSION_KEY);
    await closeSession(this.#binding, sessionId);
  }
}

/**
 * The browser's user agent and version, read once a session is connected: CDP's
 * Browser.getVersion, as k6 reads them (v1.8.1 common/browser.go fetchVersion), with "Headless"
 * taken out of the user agent as k6 does for a headless browser (Browser Run's always is), so
 * that sites which treat a headless browser apart see the one k6 shows them.
 */
async function readIdentity(browser: Browser): Promise<BrowserIdentity> {
  const cdp = await browser.newBrowserCDPSession();
  try {
    const { product, userAgent } = await cdp.send("Browser.getVersion");
    return { userAgent: userAgent.replaceAll("Headless", ""), version: product.includes("/") ? product.slice(product.indexOf("/") + 1) : product };
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Ends a session (Browser Run's DELETE /v1/devtools/browser/:id, which @cloudflare/playwright has no call for). */
export async function closeSession(binding: Fetcher, sessionId: string): Promise<void> {
  const response = await binding.fetch(`http://fake.host/v1/devtools/browser/${encodeURIComponent(sessionId)}`, { method: "DELETE" }).catch(() => null);
  await response?.body?.cancel();
}
