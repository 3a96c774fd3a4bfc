/**
 * The measuring half of a send: fetch, time the headers (TTFB), read or drain the body,
 * give the connection slot back at the headers, and tell a timeout from a connection
 * error. What it returns goes into the request's trail (core/metrics/request-trail.ts); a request
 * cut by stop() is not measured at all (IterationInterrupted, as k6 drops it). Behind a
 * redirect it measures the chain's last hop: the hops before it were measured and recorded as
 * they were followed (redirect-hops.ts), so its TTFB runs from the last hop's own send.
 */
import type { OutboundFetch, OutboundInit } from "../../core/outbound/outbound-request.ts";
import { IterationInterrupted, type FlowRequest } from "../../scenarios/flow.ts";
import type { ConnectionSlots } from "./connection-slots.ts";
import type { EngineClock } from "./engine-types.ts";
import { bodyBytes, isTimeout } from "./response-body.ts";
import type { RequestTrail } from "../../core/metrics/request-trail.ts";
import { redactUrlsIn } from "../../core/spec/redact-url.ts";

export interface MeasureDeps {
  readonly fetch: OutboundFetch;
  readonly clock: EngineClock;
  /** The slot the request holds until its headers arrive (or it fails). */
  readonly slots: ConnectionSlots;
  /** The request's timeout (timeout-queue.ts): its signal aborts the fetch. */
  readonly timeout: { readonly signal: AbortSignal; done(): void };
  /** The abort reason stop() cuts requests with, told apart from a timeout by identity. */
  readonly stoppedReason: unknown;
  readonly timeoutMs: number;
}

export interface Measured {
  readonly response: Response | null;
  readonly status: number;
  readonly ttfbMs: number;
  readonly bytes: number;
  readonly headers: Headers | null;
  /** The body, when the step reads it (captures, checks on the body). */
  readonly body: string | null;
  readonly error: "timeout" | "connection" | null;
  readonly errorMessage: string;
}

/** The hop in flight (redirect-hops.ts): its send time moves on with each redirect followed. */
export interface HopInFlight {
  readonly current: { readonly sendMs: number };
}

export async function fetchAndMeasure(d: MeasureDeps, request: FlowRequest, init: OutboundInit, hop: HopInFlight): Promise<Measured> {
  let holdingSlot = true;
  let response: Response | null = null;
  let ttfbMs = 0;
  let bytes = 0;
  let body: string | null = null;
  try {
    response = await d.fetch(request.url, init);
    ttfbMs = d.clock.now() - hop.current.sendMs;
    d.slots.release();
    holdingSlot = false;
    if (request.stream && response.ok && response.body) {
      d.timeout.done(); // the timeout covers opening; a stream's hold time is its own
    } else if (request.readBody) {
      body = await response.text();
      bytes = body.length;
    } else {
      bytes = await bodyBytes(response);
    }
    return { response, status: response.status, ttfbMs, bytes, headers: response.headers, body, error: null, errorMessage: "" };
  } catch (e) {
    if (holdingSlot) d.slots.release();
    // Stopped between two hops (redirect-hops.ts) or cut by stop() in flight: not measured.
    if (e instanceof IterationInterrupted || d.timeout.signal.reason === d.stoppedReason) {
      d.timeout.done();
      throw e instanceof IterationInterrupted ? e : new IterationInterrupted("in flight when the run stopped");
    }
    const error = isTimeout(e) ? "timeout" : "connection";
    // An error sample is stored with the run: a URL it quotes keeps no credentials.
    const errorMessage =
      error === "timeout" ? `timeout after ${d.timeoutMs} ms` : `connection error: ${redactUrlsIn(e instanceof Error ? e.message : String(e))}`;
    // A failure while reading the body still had a response: its status and headers count.
    return { response, status: response?.status ?? 0, ttfbMs, bytes, headers: response?.headers ?? null, body, error, errorMessage };
  }
}

/** When a measured request waited, left, was meant to leave and ended, and how long the event loop held it. */
export interface SendTimes {
  readonly queuedMs: number;
  readonly sendMs: number;
  readonly endMs: number;
  readonly intendedMs: number | null;
  readonly clientDelayMs: number;
}

/** A measured request's trail (core/metrics/request-trail.ts), which recordTrail records. */
export function trailOf(m: Measured, times: SendTimes): RequestTrail {
  const { status, ttfbMs, bytes, error, errorMessage, response } = m;
  return { ...times, ttfbMs, status, statusText: response?.statusText ?? "", bytes, error, errorMessage };
}
