/**
 * Which targets a deployment may load: its allow-list (the ALLOWED_TARGETS secret) and its
 * mode (loopback is allowed under wrangler dev). A load generator is a weapon: the API
 * refuses a run whose target is not allowed, and the shards and a script's setup/teardown
 * check the URLs a run leads them to (redirects, a script's requests) the same way. Pure: it
 * takes the deployment's values, not its bindings, so the coordinator and the shards both
 * import it.
 */
import type { Problem } from "./input-problem.ts";
import type { Mode } from "../run/protocol.ts";

/** A deployment's mode from its EDGELOAD_MODE var: "local" under wrangler dev, else "deployed". */
export function modeOf(edgeloadMode: string | undefined): Mode {
  return edgeloadMode === "local" ? "local" : "deployed";
}

/** 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** How a deployment sets its allow-list: a secret, so no tracked file changes and no redeploy. */
export const ALLOW_LIST_HINT =
  "set the targets this deployment may load with `npx wrangler secret put ALLOWED_TARGETS` " +
  "(comma-separated origins, hosts or *.wildcards, e.g. https://auth.example.com,*.example.net; a bare host means https on 443) " +
  "it applies at once, no redeploy";

/**
 * Whether `target` may be loaded. Anything that matches the allow-list (ALLOWED_TARGETS)
 * may: an origin (`https://api.example.com`), a host (`api.example.com`) or a wildcard
 * (`*.example.com`). Loopback is also allowed under wrangler dev (mode "local"), and
 * nowhere else unless listed (a deployed Worker cannot reach it anyway; the local deploy
 * test lists one).
 *
 * The list is a secret, not something the API can change: a leaked API token must not be
 * able to point the generator at a new target.
 */
export function checkTarget(target: string, allowList: string | undefined, mode: Mode): Problem | null {
  const url = new URL(target);
  const allowed = allowedTargets(allowList);
  const listed = isListed(url, allowList);
  const loopback = isLoopback(url.hostname);
  if (listed || (loopback && mode === "local")) return null;
  if (allowed.length === 0) return { field: "target", detail: `this deployment has no allowed targets yet: ${ALLOW_LIST_HINT}` };
  if (loopback)
    return { field: "target", detail: "loopback targets are only allowed under wrangler dev (EDGELOAD_MODE=local) or when listed in ALLOWED_TARGETS" };
  return { field: "target", detail: `${url.origin} is not in ALLOWED_TARGETS (${allowed.join(", ")}); to add it, ${ALLOW_LIST_HINT}` };
}

/** How a deployment allows push outputs' hosts: a secret in ALLOWED_TARGETS' form. */
export const OUTPUT_ALLOW_HINT =
  "allow push output hosts with `npx wrangler secret put ALLOWED_OUTPUTS` (comma-separated origins, hosts or *.wildcards, " +
  "e.g. https://otlp.example.com); it applies at once, no redeploy";

/**
 * Why a push output's URL is refused, or null: listed in ALLOWED_OUTPUTS, or loopback under
 * wrangler dev. Outputs POST once a window to a URL the spec names, with headers it chooses:
 * without a list of their own they would be a way to make the Worker call anything.
 */
export function outputHostProblem(url: URL, allowList: string | undefined, mode: Mode): string | null {
  if (isListed(url, allowList) || (isLoopback(url.hostname) && mode === "local")) return null;
  return `${url.origin} is not an allowed push output host; ${OUTPUT_ALLOW_HINT}`;
}

/**
 * Whether `url` matches an entry of a comma-separated list. An entry names a scheme, a host
 * and a port: `https://api.example.com` (an origin), `api.example.com` (a bare host: https
 * on 443, unless a port is written, `api.example.com:8443`), `*.example.com` (any subdomain,
 * https on 443 alike), `http://*.example.com:8080`. A bare host never allows plain http or
 * another port: the entry says what the owner meant, nothing wider. WebSockets go with their
 * scheme's pair (wss with https, ws with http).
 */
export function isListed(url: URL, allowList: string | undefined): boolean {
  const scheme = url.protocol === "wss:" ? "https" : url.protocol === "ws:" ? "http" : url.protocol.slice(0, -1);
  const port = url.port || (scheme === "https" ? "443" : scheme === "http" ? "80" : "");
  const host = url.hostname.toLowerCase();
  return allowedTargets(allowList).some((text) => {
    const entry = listEntry(text);
    if (!entry || entry.scheme !== scheme || entry.port !== port) return false;
    return entry.host.startsWith("*.") ? host.endsWith(entry.host.slice(1)) : host === entry.host;
  });
}

/** An allow-list entry's scheme, host (or `*.`pattern) and port; null when it is none. */
export function listEntry(text: string): { scheme: string; host: string; port: string } | null {
  const withScheme = text.includes("://") ? text : `https://${text}`;
  // URL() does not take `*` in a host: parse the pattern with a placeholder label.
  const wildcard = /^[a-z]+:\/\/\*\./.test(withScheme);
  let url: URL;
  try {
    url = new URL(wildcard ? withScheme.replace("://*.", "://wildcard.") : withScheme);
  } catch {
    return null;
  }
  if (url.pathname.replace(/\/+$/, "") !== "" || url.search || url.username) return null;
  const scheme = url.protocol.slice(0, -1);
  const port = url.port || (scheme === "https" ? "443" : scheme === "http" ? "80" : "");
  const host = wildcard ? `*.${url.hostname.slice("wildcard.".length)}` : url.hostname;
  return { scheme, host, port };
}

function allowedTargets(allowList: string | undefined): string[] {
  return (allowList ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}
