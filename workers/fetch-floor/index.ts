/**
 * The floor of sending requests from workerd: a bare fetch loop, with no edgeload in it.
 * `npm run bench` charges its workerd process per request, next to edgeload and k6, to show
 * what any fetch-based generator in workerd pays before doing any work of its own, and
 * `edgeload crosscheck --run-k6 --floor` reads its paced loop's latencies to tell the
 * runtime's part of a residual from edgeload's (core/results/crosscheck-attribution.ts).
 *
 * GET /?target=<url>&n=<requests>&concurrency=<c>
 *   A closed loop of `await fetch(url); await response.arrayBuffer()` with a fixed
 *   concurrency and nothing else: no pacing, no timing, no histograms.
 *
 * GET /?target=<url>&n=<requests>&rate=<per second>
 *   The same requests sent on an open-model schedule (request i due at i / rate): one
 *   timer per send, which is what pacing costs any generator in workerd. Each request is
 *   timed (send → body read, as k6's http_req_duration) into a plain array, and the answer
 *   gives p50/p95/p99 and each second's durations (by due time): what workerd's own fetch
 *   path measures, with no edgeload in it.
 *
 * &options=header,signal,timer,manual,content-length,body (closed loop only) adds to each
 *   request what edgeload's engine adds to its fetch: its run header, an abort signal with
 *   a timeout timer, manual redirects, a read of `content-length`, a look at
 *   `response.body` (is there one), to price each one.
 *
 * &in=object runs the loop inside a Durable Object instead of the Worker: edgeload's shards
 *   are Durable Objects, and this prices what sending from one costs over sending from a
 *   Worker (its input and output gates, its storage-backed instance), with nothing of
 *   edgeload's in it either.
 */
import { DurableObject } from "cloudflare:workers";

interface Env {
  FLOOR_OBJECT: DurableObjectNamespace<FloorObject>;
}

export class FloorObject extends DurableObject<Env> {
  override async fetch(request: Request): Promise<Response> {
    return floorLoop(new URL(request.url).searchParams);
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const params = new URL(request.url).searchParams;
    if (params.get("in") === "object") return env.FLOOR_OBJECT.get(env.FLOOR_OBJECT.idFromName("floor")).fetch(request);
    return floorLoop(params);
  },
} satisfies ExportedHandler<Env>;

async function floorLoop(params: URLSearchParams): Promise<Response> {
  const target = params.get("target");
  const n = Number(params.get("n") ?? 0);
  const concurrency = Number(params.get("concurrency") ?? 1);
  const rate = Number(params.get("rate") ?? 0);
  if (!target || !(n > 0) || !(concurrency > 0) || !(rate >= 0)) return new Response("target, n and concurrency or rate are required", { status: 400 });
  const options = new Set((params.get("options") ?? "").split(",").filter(Boolean));
  let bytes = 0;
  let declaredBytes = 0;
  const send = async () => {
    if (options.size === 0) {
      bytes += (await (await fetch(target)).arrayBuffer()).byteLength;
      return;
    }
    const init: RequestInit = {};
    if (options.has("header")) init.headers = { "x-edgeload-run": "r-00000000-00000000;0;0" };
    const abort = options.has("signal") ? new AbortController() : null;
    if (abort) init.signal = abort.signal;
    const timer = options.has("timer") ? setTimeout(() => abort?.abort(), 10_000) : null;
    if (options.has("manual")) init.redirect = "manual";
    const response = await fetch(target, init);
    if (options.has("content-length")) declaredBytes += Number(response.headers.get("content-length") ?? 0);
    // "body": ask whether there is one first, as the engine does before reading it.
    if (!options.has("body") || response.body) bytes += (await response.arrayBuffer()).byteLength;
    if (timer !== null) clearTimeout(timer);
  };
  if (rate > 0) {
    const t0 = Date.now();
    const inFlight: Promise<void>[] = [];
    const durationsMs: number[] = [];
    const bySecondMs: number[][] = [];
    const timed = async (second: number) => {
      const sentAt = Date.now();
      await send();
      const ms = Date.now() - sentAt;
      durationsMs.push(ms);
      (bySecondMs[second] ??= []).push(ms);
    };
    for (let i = 0; i < n; i++) {
      const wait = t0 + (i * 1000) / rate - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      inFlight.push(timed(Math.floor(i / rate)));
    }
    await Promise.all(inFlight);
    durationsMs.sort((a, b) => a - b);
    const at = (q: number) => durationsMs[Math.min(durationsMs.length - 1, Math.ceil(q * durationsMs.length) - 1)];
    return Response.json({ requests: n, bytes, p50Ms: at(0.5), p90Ms: at(0.9), p95Ms: at(0.95), p99Ms: at(0.99), maxMs: durationsMs.at(-1), bySecondMs });
  }
  let started = 0;
  const lane = async () => {
    while (started < n) {
      started++;
      await send();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  return Response.json({ requests: n, bytes, ...(options.has("content-length") ? { declaredBytes } : {}) });
}
