/**
 * A request's redirect chain as a shard records it: every hop is a request of its own, as k6
 * counts them (k6's transport saves one trail per round trip): one `http_reqs` each, timed from
 * its own send to the end of its own body, tagged with its own URL, method and status, judged
 * by the request's expected statuses. The outbound module shows the hops
 * (workers/outbound/outbound-fetch.ts, RedirectWatcher); this keeps the hop in flight, so that
 * whatever ends the chain — the last response, a timeout, a refused hop — is recorded once,
 * against the hop it happened to, by the sender (request-sender.ts).
 */
import type { HopTarget, RedirectWatcher } from "../../core/outbound/outbound-request.ts";
import { IterationInterrupted, type FlowRequest } from "../../scenarios/flow.ts";
import type { EngineClock } from "./engine-types.ts";
import type { Measured } from "./measure-request.ts";
import { bodyBytes } from "./response-body.ts";

/** One hop of a chain: where it went, how, and when it left. */
export interface Hop extends HopTarget {
  /** When it began waiting for a connection slot: the first hop's wait; a later hop holds the first's slot. */
  readonly queuedMs: number;
  readonly sendMs: number;
  /**
   * When it was meant to leave: the first hop's schedule; a later hop is sent when the 3xx asks
   * for it, as a flow's later requests are (iteration-io.ts), so it has no lag of its own.
   */
  readonly intendedMs: number | null;
}

/** What a chain needs of its sender: the clock, and where its hops are counted. */
export interface HopSender {
  readonly clock: EngineClock;
  readonly isStopped: () => boolean;
  /** Records a hop whose 3xx is followed, measured to the end of its body at `endMs`. */
  recordHop(chain: RedirectHops, hop: Hop, measured: Measured, endMs: number): void;
  /** Counts a later hop sent at `sendMs`; the headers it carries in place of the request's (its run tag). */
  sendingHop(chain: RedirectHops, sendMs: number): Readonly<Record<string, string>>;
}

export class RedirectHops implements RedirectWatcher {
  readonly stepIndex: number;
  readonly request: FlowRequest;
  readonly #sender: HopSender;
  #current: Hop;

  constructor(sender: HopSender, stepIndex: number, request: FlowRequest, first: Hop) {
    this.#sender = sender;
    this.stepIndex = stepIndex;
    this.request = request;
    this.#current = first;
  }

  /** The hop in flight: the first until a 3xx is followed, then each later one; the last once the chain ends. */
  get current(): Hop {
    return this.#current;
  }

  /**
   * A 3xx about to be followed: its body is read to its end (Go drains it too) and the hop is
   * recorded. A body that fails to arrive throws, and the sender records that failure against
   * this same hop, once.
   */
  async followed(response: Response): Promise<void> {
    const { clock } = this.#sender;
    const hop = this.#current;
    const ttfbMs = clock.now() - hop.sendMs;
    const bytes = await bodyBytes(response);
    const measured: Measured = { response, status: response.status, ttfbMs, bytes, headers: response.headers, body: null, error: null, errorMessage: "" };
    this.#sender.recordHop(this, hop, measured, clock.now());
  }

  /** The next hop leaves now (nothing leaves after stop(): the chain is interrupted, as a queued request is). */
  leaving(target: HopTarget): Readonly<Record<string, string>> {
    if (this.#sender.isStopped()) throw new IterationInterrupted("run stopped between redirects");
    const sendMs = this.#sender.clock.now();
    const intendedMs = this.#current.intendedMs === null ? null : sendMs;
    this.#current = { url: target.url, method: target.method, queuedMs: sendMs, sendMs, intendedMs };
    return this.#sender.sendingHop(this, sendMs);
  }
}
