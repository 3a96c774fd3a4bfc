/**
 * Safety policy of a deployment, read from its vars: which targets it may load, and the
 * caps on every run. A load generator is a weapon; the defaults are conservative.
 */
import { DEFAULT_LIMITS, type Limits } from "../core/plan.ts";
import type { Problem } from "../core/problem.ts";
import type { Env } from "./env.ts";
import type { Mode } from "../core/protocol.ts";

export function modeOf(env: Env): Mode {
  return env.EDGELOAD_MODE === "local" ? "local" : "deployed";
}

/** Reads a numeric var; a missing var means the default, a malformed one is a config error. */
function numberVar(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`var ${name} must be a positive number, got "${value}"`);
  return n;
}

export function limitsOf(env: Env): Limits & { maxConcurrentRuns: number } {
  return {
    maxRatePerS: numberVar(env.MAX_RATE_PER_S, DEFAULT_LIMITS.maxRatePerS, "MAX_RATE_PER_S"),
    maxDurationMs: numberVar(env.MAX_DURATION_S, DEFAULT_LIMITS.maxDurationMs / 1000, "MAX_DURATION_S") * 1000,
    maxShards: numberVar(env.MAX_SHARDS, DEFAULT_LIMITS.maxShards, "MAX_SHARDS"),
    maxTotalRequests: numberVar(env.MAX_TOTAL_REQUESTS, DEFAULT_LIMITS.maxTotalRequests, "MAX_TOTAL_REQUESTS"),
    maxVUs: numberVar(env.MAX_VUS, DEFAULT_LIMITS.maxVUs, "MAX_VUS"),
    subrequestsPerInvocation: numberVar(env.SUBREQUESTS_PER_INVOCATION, DEFAULT_LIMITS.subrequestsPerInvocation, "SUBREQUESTS_PER_INVOCATION"),
    maxConcurrentRuns: numberVar(env.MAX_CONCURRENT_RUNS, 5, "MAX_CONCURRENT_RUNS"),
  };
}

/** 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** How a deployment sets its allow-list: a secret, so no tracked file changes and no redeploy. */
export const ALLOW_LIST_HINT =
  "set the targets this deployment may load with `npx wrangler secret put ALLOWED_TARGETS` " +
  "(comma-separated origins, hosts or *.wildcards, e.g. https://auth.example.com,*.example.net); " +
  "it applies at once, no redeploy";

/**
 * Whether `target` may be loaded. Anything that matches ALLOWED_TARGETS may: an origin
 * (`https://api.example.com`), a host (`api.example.com`) or a wildcard (`*.example.com`).
 * Loopback is also allowed under wrangler dev (EDGELOAD_MODE=local), and nowhere else
 * unless listed (a deployed Worker cannot reach it anyway; the local deploy test lists one).
 *
 * The list is a secret, not something the API can change: a leaked API token must not be
 * able to point the generator at a new target.
 */
export function checkTarget(target: string, env: Env): Problem | null {
  const url = new URL(target);
  const allowed = allowedTargets(env);
  const host = url.hostname.toLowerCase();
  const listed = allowed.some((entry) => {
    if (entry.includes("://")) return entry.replace(/\/+$/, "") === url.origin.toLowerCase();
    if (entry.startsWith("*.")) return host.endsWith(entry.slice(1));
    return host === entry;
  });
  const loopback = isLoopback(url.hostname);
  if (listed || (loopback && modeOf(env) === "local")) return null;
  if (allowed.length === 0) return { field: "target", detail: `this deployment has no allowed targets yet: ${ALLOW_LIST_HINT}` };
  if (loopback) return { field: "target", detail: "loopback targets are only allowed under wrangler dev (EDGELOAD_MODE=local) or when listed in ALLOWED_TARGETS" };
  return { field: "target", detail: `${url.origin} is not in ALLOWED_TARGETS (${allowed.join(", ")}); to add it, ${ALLOW_LIST_HINT}` };
}

function allowedTargets(env: Env): string[] {
  return (env.ALLOWED_TARGETS ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
}
