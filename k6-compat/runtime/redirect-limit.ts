/**
 * How many redirects a k6 request follows: its `params.redirects`, else the script's
 * `options.maxRedirects`, else k6's default of 10 (the outbound module applies it,
 * workers/outbound/outbound-fetch.ts). A request that would need more gets its last 3xx.
 */

/** A limit as k6 accepts it: a whole number ≥ 0; `where` names the setting in the error. */
export function redirectCount(value: unknown, where: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
    throw new Error(`${where} must be a whole number of redirects (0 or more), got ${JSON.stringify(value)}`);
  return value;
}

/** A request's limit as a WireRequest's field: none when the script sets none (k6's default). */
export function redirectLimit(perRequest: unknown, fromOptions: number | undefined): { maxRedirects?: number } {
  const maxRedirects = redirectCount(perRequest, "params.redirects") ?? fromOptions;
  return maxRedirects === undefined ? {} : { maxRedirects };
}
