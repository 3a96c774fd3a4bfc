/**
 * Where a Durable Object actually runs. A location hint is a wish honoured on the object's
 * first `get()` at best; there is no API that tells the colo. A deployed object can fetch
 * any Cloudflare zone's `/cdn-cgi/trace`: the answer is `key=value` lines, `colo=` naming
 * the data centre (IATA code) that served it — the one the object runs in, since a
 * subrequest leaves from there. Shards record it next to their hint, so results are
 * attributed per hint (`region`) and per observed `colo`. Under wrangler dev it is "local".
 *
 * Pure parsing of the answer (the shard does the fetch), so it sits in core. The recorded
 * shape is in test/fixtures/cloudflare/cdn-cgi-trace.txt.
 */

/** Fields of a /cdn-cgi/trace answer. */
export function parseTrace(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const eq = line.indexOf("=");
    if (eq > 0) out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** The colo of a trace answer, or "unknown" when it names none (not a Cloudflare answer). */
export function coloFromTrace(text: string): string {
  const colo = parseTrace(text).colo;
  return colo && /^[A-Z]{3}$/.test(colo) ? colo : "unknown";
}
