/**
 * The sessions a k6 script's shard runs its iterations on (script-flow.ts). Opening one is a
 * call into the script's Dynamic Worker, billed as a request; the iterations on it are not
 * (ITERATIONS_PER_SCRIPT_SESSION says why they are still renewed).
 */
import { ITERATIONS_PER_SCRIPT_SESSION } from "../../core/schedule/shard-assignment.ts";

/** An RPC stub of a session: each method answers a promise, and disposing it ends its opening call. */
export type ScriptSession<Api> = {
  [K in keyof Api]: Api[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
} & Partial<Disposable>;

/**
 * The sessions a shard's iterations run on: one at a time, renewed after
 * ITERATIONS_PER_SCRIPT_SESSION iterations, or at once when a call on it failed (its isolate
 * gone: the stub stays broken). A session left behind is disposed once its last iteration ends,
 * which ends its opening call.
 */
export class ScriptSessions<Session extends object> {
  readonly #open: () => Promise<Session>;
  readonly #limit: number;
  #current: SessionLease<Session> | null = null;

  /** `limit`: iterations per session (a test's smaller one). */
  constructor(open: () => Promise<Session>, limit = ITERATIONS_PER_SCRIPT_SESSION) {
    this.#open = open;
    this.#limit = limit;
  }

  async use<T>(iteration: (session: Session) => Promise<T>): Promise<T> {
    let lease = this.#current;
    if (!lease || lease.started >= this.#limit) {
      if (lease) this.#leave(lease);
      lease = this.#current = { session: this.#open(), started: 0, running: 0, left: false };
    }
    lease.started++;
    lease.running++;
    try {
      return await iteration(await lease.session);
    } catch (error) {
      if (this.#current === lease) this.#leave(lease);
      throw error;
    } finally {
      lease.running--;
      if (lease.left && lease.running === 0) void dispose(lease);
    }
  }

  #leave(lease: SessionLease<Session>): void {
    if (this.#current === lease) this.#current = null;
    lease.left = true;
    if (lease.running === 0) void dispose(lease);
  }
}

interface SessionLease<Session> {
  readonly session: Promise<Session>;
  /** Iterations begun on it. */
  started: number;
  /** Iterations on it not yet ended. */
  running: number;
  /** No new iteration goes to it. */
  left: boolean;
}

async function dispose<Session extends object>(lease: SessionLease<Session>): Promise<void> {
  try {
    ((await lease.session) as Partial<Disposable>)[Symbol.dispose]?.();
  } catch {
    // It never opened, or its isolate is gone: nothing to end.
  }
}
