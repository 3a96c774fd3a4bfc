/**
 * Which URLs a script's remote imports may be fetched from. The code fetched is bundled and
 * run in every shard, so it must arrive as its server sent it: https only. Plain http is
 * fetched only behind an explicit flag (the CLI's --allow-http-modules), or from loopback.
 *
 * Why loopback http needs no flag: a request to 127.0.0.1, ::1 or localhost never leaves the
 * machine, so no one on a network path can change the code in flight, which is the one thing
 * https adds here; whoever can serve on this machine's loopback can as well edit the script
 * itself. It is also how k6 users serve a local copy of jslib, and how the unit tests serve
 * theirs (remote-modules.test.ts). Only these three names: a name that merely starts like
 * one (`127.0.0.1.nip.io`) resolves wherever its DNS says. `localhost` is resolved by the
 * system, which RFC 6761 §6.3 asks to answer with loopback.
 */

/** The CLI flag that lets plain http:// modules in, as refusals name it. */
export const ALLOW_HTTP_FLAG = "--allow-http-modules";

/** Hostnames as the WHATWG URL parser leaves them (`http://0x7f.1/` is already `127.0.0.1`). */
const LOOPBACK_HOSTNAMES: ReadonlySet<string> = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why `url` may not be fetched, or null when it may: https always, http to loopback always,
 * http elsewhere only with `allowHttp`, nothing else ever. Pinned by remote-modules.test.ts
 * ("which module URLs are fetched").
 */
export function moduleUrlRefusal(url: URL, allowHttp: boolean): string | null {
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") {
    if (allowHttp || LOOPBACK_HOSTNAMES.has(url.hostname)) return null;
    return `plain http:// can be changed by anyone on the network path; import it over https://, or pass ${ALLOW_HTTP_FLAG} to accept it`;
  }
  return `only https:// modules can be imported (http:// with ${ALLOW_HTTP_FLAG})`;
}
