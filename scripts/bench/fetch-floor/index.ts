/**
 * Benchmark-only Worker: the CPU floor of sending requests from workerd. It runs a closed
 * loop of `await fetch(url); await response.arrayBuffer()` with a fixed concurrency and
 * nothing else: no pacing, no timing, no histograms. `npm run bench` charges its workerd
 * process per request, next to edgeload and k6, to show what any fetch-based generator in
 * workerd pays before doing any work of its own.
 *
 * GET /?target=<url>&n=<requests>&concurrency=<c>
 */
export default {
  async fetch(request: Request): Promise<Response> {
    const params = new URL(request.url).searchParams;
    const target = params.get("target");
    const n = Number(params.get("n") ?? 0);
    const concurrency = Number(params.get("concurrency") ?? 1);
    if (!target || !(n > 0) || !(concurrency > 0)) return new Response("target, n and concurrency are required", { status: 400 });
    let started = 0;
    let bytes = 0;
    const lane = async () => {
      while (started < n) {
        started++;
        bytes += (await (await fetch(target)).arrayBuffer()).byteLength;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
    return Response.json({ requests: n, bytes });
  },
} satisfies ExportedHandler;
