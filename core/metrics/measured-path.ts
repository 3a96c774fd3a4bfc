/**
 * What a summary says about how its figures were measured: the resolution of the clock the
 * shards timed requests with (core/metrics/clock-resolution.ts), and the path the load took to the
 * target. Both change how far a figure can be trusted, so every summary carries them.
 */
import { finerResolution } from "./clock-resolution.ts";
import type { ShardTelemetry } from "../run/protocol.ts";

export interface ClockView {
  /** The clock's detected step in ms (1 under workerd), or null when no request was timed. */
  readonly resolutionMs: number | null;
  readonly note: string;
}

export interface PathView {
  /** A response carried `cf-ray` or `server: cloudflare`. */
  readonly targetBehindCloudflare: boolean;
  readonly note: string | null;
}

export function clockView(telemetry: ReadonlyArray<ShardTelemetry | null>): ClockView {
  let us: number | null = null;
  for (const t of telemetry) us = finerResolution(us, t?.clockResolutionUs);
  const resolutionMs = us === null ? null : us / 1000;
  const note =
    resolutionMs === null
      ? "no request was timed"
      : resolutionMs >= 1
        ? `the shards' clock moved in ${resolutionMs} ms steps (workerd's clock advances only at I/O, in whole milliseconds): each latency is ±${resolutionMs} ms, and two runs less than ${resolutionMs} ms apart cannot be told apart`
        : `the shards' clock read to ${resolutionMs * 1000} µs`;
  return { resolutionMs, note };
}

/**
 * Worker subrequests do not take an outside client's path: they leave from the shard's own
 * colo into Cloudflare's network, so a target behind Cloudflare is reached without the
 * client-side internet, and requests are not coalesced by the CDN as many clients' would be.
 */
export const BEHIND_CLOUDFLARE_NOTE =
  "the target answered through Cloudflare (cf-ray): the load reached it as Worker subrequests from each shard's colo, not over an outside client's path — no client-side internet latency, routing within Cloudflare's network to the zone, and no CDN request coalescing across clients, so cache hit rates can be lower and latencies lower than real users see";

export function pathView(telemetry: ReadonlyArray<ShardTelemetry | null>): PathView {
  const behind = telemetry.some((t) => t?.behindCloudflare === true);
  return { targetBehindCloudflare: behind, note: behind ? BEHIND_CLOUDFLARE_NOTE : null };
}
