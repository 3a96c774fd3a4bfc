/**
 * Push outputs (`outputs` in the spec): the RunCoordinator hands the run's totals to
 * `push()` once per tick, after merged windows are written; each output gets an OTLP/HTTP
 * (core/formats/otlp-metrics.ts) or remote-write (core/formats/remote-write.ts) request in the background.
 *
 * A slow or failing endpoint must never slow or fail the run, so: nothing here is awaited
 * on the coordinator's path; each attempt has a timeout (PUSH_TIMEOUT_MS); a failed push is
 * retried at most PUSH_RETRIES times with a short backoff; while an output's push is still
 * under way, the newest window's body waits for it and an older waiting one is dropped and
 * counted (totals are cumulative, so the next push that lands carries everything — a drop
 * costs resolution, never counts, and the final totals are always sent last). Outcomes
 * are counted per output and shown in the run's status. Pushes go out through the outbound
 * module (workers/outbound/) under ALLOWED_OUTPUTS: a refused host counts as a failed attempt.
 */
import type { OutboundFetch } from "../../core/outbound/outbound-request.ts";
import type { Env } from "../../workers/env.ts";
import { outboundFetch } from "../../workers/outbound/outbound-fetch.ts";
import { pushOutputPolicy } from "../../workers/outbound/policies.ts";
import type { OutputSpec } from "../../core/spec/outputs-schema.ts";
import type { OutputStatus } from "../../core/run/protocol.ts";
import { redactUrlsIn } from "../../core/spec/redact-url.ts";

export const PUSH_TIMEOUT_MS = 2_000;
export const PUSH_RETRIES = 2;
const RETRY_BACKOFF_MS = 250;

/** A request body and the headers that describe it (content type, encoding). */
export interface PushBody {
  readonly bytes: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

interface OutputState {
  pushed: number;
  failedAttempts: number;
  dropped: number;
  lastError: string | null;
  busy: boolean;
  /** The newest body waiting for the push under way. */
  waiting: PushBody | null;
}

export class MetricsPusher {
  readonly #states: OutputState[] = [];
  readonly #toOutputs: OutboundFetch;

  /** Pushes reach only the deployment's push output hosts (ALLOWED_OUTPUTS, pushOutputPolicy). */
  constructor(env: Pick<Env, "ALLOWED_OUTPUTS" | "EDGELOAD_MODE">) {
    this.#toOutputs = outboundFetch(pushOutputPolicy(env));
  }

  /** Starts (or queues behind the one under way) one push per output; never awaited. */
  push(outputs: readonly OutputSpec[], body: (type: OutputSpec["type"]) => PushBody): void {
    const built = new Map<OutputSpec["type"], PushBody>();
    outputs.forEach((output, i) => {
      const state = (this.#states[i] ??= { pushed: 0, failedAttempts: 0, dropped: 0, lastError: null, busy: false, waiting: null });
      let b = built.get(output.type);
      if (!b) built.set(output.type, (b = body(output.type)));
      if (state.busy) {
        if (state.waiting) state.dropped += 1;
        state.waiting = b;
        return;
      }
      this.#start(output, state, b);
    });
  }

  #start(output: OutputSpec, state: OutputState, body: PushBody): void {
    state.busy = true;
    void this.#send(output, state, body).finally(() => {
      state.busy = false;
      const next = state.waiting;
      state.waiting = null;
      if (next) this.#start(output, state, next);
    });
  }

  /** What the run's status shows: counts per output, its URL without query or credentials. */
  status(outputs: readonly Pick<OutputSpec, "type" | "url">[]): OutputStatus[] {
    return outputs.map((o, i) => {
      const s = this.#states[i];
      const url = new URL(o.url);
      return {
        type: o.type,
        url: `${url.origin}${url.pathname}`,
        pushed: s?.pushed ?? 0,
        failedAttempts: s?.failedAttempts ?? 0,
        dropped: s?.dropped ?? 0,
        lastError: s?.lastError ?? null,
      };
    });
  }

  async #send(output: OutputSpec, state: OutputState, body: PushBody): Promise<void> {
    for (let attempt = 0; attempt <= PUSH_RETRIES; attempt++) {
      if (attempt) await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS * attempt));
      try {
        const response = await this.#toOutputs(output.url, {
          method: "POST",
          headers: { ...output.headers, ...body.headers },
          body: body.bytes,
          signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
        });
        await response.body?.cancel();
        if (response.ok) {
          state.pushed += 1;
          return;
        }
        state.lastError = `HTTP ${response.status}`;
        // 4xx other than 429 will not get better by retrying the same body.
        if (response.status < 500 && response.status !== 429) break;
      } catch (error) {
        // Shown in the run's status: the output's URL in a fetch error keeps no credentials.
        state.lastError = redactUrlsIn(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      }
      state.failedAttempts += 1;
    }
    state.dropped += 1;
  }
}
