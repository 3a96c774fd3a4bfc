/**
 * The script options a VU applies itself, read from its own instance's `options` export when
 * it starts (the CLI checked them before any load: k6-compat/behaviour-options.ts), and the
 * per-request `params.timeout` and `params.throw` that override them. k6 reads the same
 * options in its VU (internal/js/runner.go, js/modules/k6/http/request.go).
 */
import { parseDurationMs } from "../../core/spec/duration.ts";
import { redirectCount } from "./redirect-limit.ts";
import { rpsOption } from "./rps-limit.ts";

export interface VuOptions {
  /** options.maxRedirects, when set (redirect-limit.ts). */
  readonly maxRedirects?: number;
  /** options.throw: a request that fails without a response throws in the script. */
  readonly throws: boolean;
  /** options.noCookiesReset: the VU's jar is kept from one iteration to the next. */
  readonly keepsCookies: boolean;
  /** options.discardResponseBodies: a request's responseType is "none" unless it names one. */
  readonly discardsBodies: boolean;
  /** options.userAgent, when set: every request's User-Agent unless it sets its own ("" sends none). */
  readonly userAgent?: string;
  /** options.rps, when above 0: the test's requests per second (rps-limit.ts); the CLI's --rps is in exec.test.options. */
  readonly rps?: number;
}

/** The VU's options from its script's `options` export (absent: k6's defaults). */
export function vuOptions(exported: unknown): VuOptions {
  const options = (typeof exported === "object" && exported !== null ? exported : {}) as Record<string, unknown>;
  const maxRedirects = redirectCount(options.maxRedirects, "options.maxRedirects");
  const userAgent = userAgentOption(options.userAgent);
  const rps = rpsOption(options.rps);
  return {
    ...(maxRedirects !== undefined ? { maxRedirects } : {}),
    throws: options.throw === true,
    keepsCookies: options.noCookiesReset === true,
    discardsBodies: options.discardResponseBodies === true,
    ...(userAgent !== undefined ? { userAgent } : {}),
    ...(rps !== undefined ? { rps } : {}),
  };
}

/** options.userAgent: a string (k6 refuses any other type when it reads the options). */
export function userAgentOption(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error(`options.userAgent must be a string, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * k6's `params.timeout` in ms: a duration string ("5s", "1m30s", "500ms"), a number of ms, or
 * a string of digits read as ms, as k6 reads it (lib/types ParseExtendedDuration). Absent: the
 * run's. One that is not a duration, or not more than 0, throws naming it.
 *
 * @example requestTimeoutMs("2.5s") // 2500
 */
export function requestTimeoutMs(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === "string" && /^\d+(\.\d+)?$/.test(value) ? Number(value) : parseDurationMs(value);
  if (ms === undefined || !(ms > 0))
    throw new Error(`params.timeout must be a duration like "5s" or "500ms", or a number of ms above 0, got ${JSON.stringify(value)}`);
  return ms;
}

/** Whether a request throws when it fails without a response: its `params.throw`, else options.throw (`fromOptions`). */
export function requestThrows(perRequest: unknown, fromOptions: boolean): boolean {
  return perRequest === undefined || perRequest === null ? fromOptions : Boolean(perRequest);
}
