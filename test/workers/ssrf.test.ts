/**
 * Server-side request forgery, tried on every outbound path of a deployed configuration: a
 * list of addresses nobody allowed (loopback and link-local, cloud metadata services, private
 * ranges, names that resolve to them, numeric spellings of loopback) is aimed at each path
 * directly and through a redirect from the one allowed host (the local target, listed in
 * ALLOWED_TARGETS, ALLOWED_WEBHOOKS and ALLOWED_OUTPUTS as a deployment would list it). Every
 * attempt must be refused before it is sent and counted as refused; the network (a recording
 * fetcher in front of the platform's) must see nothing but the allowed host.
 *
 * The paths are the deployed code's own: the policies of workers/outbound/policies.ts with the
 * outbound fetch (load, k6 setup/teardown, spec steps, webhooks, push outputs, the colo
 * probe), and the code that sends for the spec's setup steps, push outputs and WebSockets.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MetricsPusher } from "../../coordinator/run/metrics-push.ts";
import { runSetupSteps } from "../../coordinator/run/phases.ts";
import { parseRunSpec } from "../../core/spec/run-spec.ts";
import { outbound, outboundFetch, OutboundRefused } from "../../workers/outbound/outbound-fetch.ts";
import { onlyOrigin, pushOutputPolicy, targetPolicy, webhookPolicy } from "../../workers/outbound/policies.ts";
import { ScriptSockets } from "../../workers/shard/script-sockets.ts";
import type { FlowIO } from "../../scenarios/flow.ts";
import type { Env } from "../../workers/env.ts";

const TARGET = new URL(env.TARGET_URL).origin;

/** A deployment that lists the local target, and nothing else, on every list. */
const DEPLOYED = { ...env, EDGELOAD_MODE: "deployed", ALLOWED_TARGETS: TARGET, ALLOWED_WEBHOOKS: TARGET, ALLOWED_OUTPUTS: TARGET } as Env;

/** Addresses a load generator must never be led to. None is the target's own host and port. */
const FORBIDDEN = [
  "http://127.0.0.1:1/", // loopback, another port than the listed one
  "http://localhost/",
  "http://[::1]/",
  "http://0.0.0.0/",
  "http://2130706433/", // 127.0.0.1 spelled as one number
  "http://0x7f.1/", // 127.0.0.1 in hex
  "http://169.254.169.254/latest/meta-data/", // AWS, GCP, Azure instance metadata
  "http://[fd00:ec2::254]/latest/meta-data/", // AWS metadata over IPv6
  "http://[::ffff:169.254.169.254]/",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://100.100.100.200/latest/meta-data/", // Alibaba Cloud metadata
  "http://10.0.0.1/",
  "http://192.168.1.1/",
  "http://127.0.0.1.nip.io/", // a public name that resolves to loopback
  "https://169.254.169.254/",
];

/** The platform's fetch behind a recorder: what actually went on the wire. */
function recordingFetch(): { fetcher: typeof fetch; sent: string[] } {
  const sent: string[] = [];
  const fetcher: typeof fetch = (input, init) => {
    sent.push(new URL(input instanceof Request ? input.url : String(input)).origin);
    return fetch(input, init);
  };
  return { fetcher, sent };
}

const viaRedirect = (to: string) => `${TARGET}/delay?ms=0&redirect=${encodeURIComponent(to)}`;

const PATHS = [
  { path: "load, k6 setup/teardown, spec steps (ALLOWED_TARGETS)", policy: targetPolicy(DEPLOYED) },
  { path: "webhooks (ALLOWED_WEBHOOKS)", policy: webhookPolicy(DEPLOYED) },
  { path: "push outputs (ALLOWED_OUTPUTS)", policy: pushOutputPolicy(DEPLOYED) },
  { path: "the colo probe (its trace URL's origin)", policy: onlyOrigin(`${TARGET}/cdn-cgi/trace`) },
];

describe("SSRF on every outbound path of a deployed configuration", () => {
  it.each(PATHS)("$path: every forbidden address refused, directly and through a redirect, and never sent", async ({ policy }) => {
    const { fetcher, sent } = recordingFetch();
    const send = outboundFetch(policy, fetcher);
    let refused = 0;
    for (const url of FORBIDDEN) {
      for (const attempt of [url, viaRedirect(url)]) {
        const error = await send(attempt).then(
          async (response) => {
            await response.body?.cancel();
            return null;
          },
          (e: unknown) => e,
        );
        expect(error, attempt).toBeInstanceOf(OutboundRefused);
        refused++;
      }
    }
    expect(refused).toBe(FORBIDDEN.length * 2);
    // The redirects' first hops went to the allowed host; nothing else was sent.
    expect(new Set(sent)).toEqual(new Set([TARGET]));
    expect(sent.length).toBe(FORBIDDEN.length);
  });

  it("spec setup steps: a redirect to each forbidden address fails the setup, naming the refusal", async () => {
    for (const url of FORBIDDEN.slice(0, 5)) {
      const parsed = parseRunSpec({
        target: TARGET,
        steps: [{ path: "/delay?ms=0" }],
        setup: [{ path: `/delay?ms=0&redirect=${encodeURIComponent(url)}` }],
        executor: "constant-arrival-rate",
        rate: 1,
        duration: "1s",
      });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      const outcome = await runSetupSteps(DEPLOYED, parsed.spec);
      expect(outcome?.failure, url).toMatch(/refused/);
    }
  });

  it("push outputs: each forbidden URL is refused and counted as a failed push, with the reason", async () => {
    const pusher = new MetricsPusher(DEPLOYED);
    const outputs = FORBIDDEN.map((url) => ({ type: "prometheus-rw" as const, url, headers: {} }));
    pusher.push(outputs as never, () => ({ body: new Uint8Array(1), contentType: "application/x-protobuf", encoding: "snappy" }) as never);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const status = pusher.status(outputs);
    expect(status.map((s) => s.pushed)).toEqual(FORBIDDEN.map(() => 0));
    for (const s of status) expect(s.lastError, s.url).toMatch(/not an allowed push output host|refused/);
  });

  it("WebSockets: a forbidden address is refused before the handshake; a handshake that redirects is not followed", async () => {
    const { fetcher, sent } = recordingFetch();
    const counts: string[] = [];
    const io = { now: () => Date.now(), count: (name: string) => counts.push(name), trend: () => {}, sleep: async () => {} } as unknown as FlowIO;
    const sockets = new ScriptSockets(io, outbound(targetPolicy(DEPLOYED), fetcher));
    const request = (url: string) => ({ url, protocols: [], headers: {}, closeFrameIsMessage: false, tags: {} as never });
    for (const url of FORBIDDEN) {
      await expect(sockets.session(request(url.replace(/^http/, "ws")), () => {})).rejects.toThrow(/refused before it was opened/);
    }
    const events: string[] = [];
    await sockets.session(
      request(viaRedirect("ws://169.254.169.254/").replace(/^http/, "ws")),
      (e) => void events.push(`${e.type}:${"error" in e ? e.error : ""}`),
    );
    expect(events[0]).toMatch(/^error:websocket: bad handshake .* answered 30\d/);
    expect(new Set(sent)).toEqual(new Set([TARGET]));
  });
});
