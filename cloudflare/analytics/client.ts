/**
 * A client for the Cloudflare GraphQL Analytics API (POST https://api.cloudflare.com/client/v4/graphql,
 * `Authorization: Bearer <token>`): sends the queries of queries.ts, pages through their
 * groups, retries what the API says to retry, and turns refusals into errors that name the
 * permission the token lacks.
 *
 * Errors follow https://developers.cloudflare.com/analytics/graphql-api/errors/: a 200 may
 * carry `errors: [{message, path, extensions}]`; rate limits come as HTTP 429 (or a 200
 * whose message says so) and are retried with exponential backoff, honouring Retry-After,
 * a bounded number of times; 503 "try again later" is retried the same way; 401/403 and
 * "not authorized" are not retried. The API documents messages, not codes, so those
 * documented messages (and `extensions.code` when present) are what is classified.
 * Limits (300 queries per 5 minutes per user): https://developers.cloudflare.com/analytics/graphql-api/limits/
 *
 * `fetch`, `sleep` and `now` are injected, and the URL is configurable, so tests run it
 * against a local server without waiting.
 */
import {
  buildQuery,
  D1_ANALYTICS,
  D1_DATABASES_FILTER,
  DURABLE_OBJECT_INVOCATIONS,
  keyOf,
  toD1Group,
  toDurableObjectGroup,
  toWorkerGroup,
  toZoneGroup,
  toZoneLatency,
  withFilter,
  WORKER_INVOCATIONS,
  WORKER_MINUTES,
  WORKER_WINDOW,
  ZONE_HOST_FILTER,
  ZONE_LATENCY,
  ZONE_REQUESTS,
  type D1Group,
  type DatasetSpec,
  type DurableObjectGroup,
  type GraphQLRow,
  type KeyValue,
  type Scope,
  type WorkerGroup,
  type ZoneGroup,
  type ZoneLatency,
} from "./queries.ts";

export const GRAPHQL_URL = "https://api.cloudflare.com/client/v4/graphql";

/** The token permission each scope needs (https://developers.cloudflare.com/analytics/graphql-api/getting-started/authentication/api-token-auth/). */
export const PERMISSIONS: Readonly<Record<Scope, string>> = { account: "Account Analytics Read", zone: "Zone Analytics Read" };

export type AnalyticsFailure = "unauthenticated" | "permission" | "rate_limited" | "unavailable" | "bad_query" | "too_many_pages";

/** A query Cloudflare would not answer, tagged with why. */
export class AnalyticsError extends Error {
  readonly reason: AnalyticsFailure;
  readonly dataset: string;
  constructor(reason: AnalyticsFailure, dataset: string, message: string) {
    super(message);
    this.reason = reason;
    this.dataset = dataset;
  }
}

export interface AnalyticsClientOptions {
  readonly token: string;
  /** The GraphQL endpoint (tests point it at a local server). */
  readonly url?: string;
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  /** Tries per request, the first included. */
  readonly maxAttempts?: number;
  /** First backoff; doubles on each retry unless Retry-After says otherwise. */
  readonly baseDelayMs?: number;
  /** The longest single wait; a longer Retry-After fails at once, saying when to come back. */
  readonly maxDelayMs?: number;
  readonly pageSize?: number;
  readonly maxPages?: number;
  readonly onRetry?: (info: { readonly dataset: string; readonly attempt: number; readonly delayMs: number; readonly reason: string }) => void;
}

interface GraphQLError {
  readonly message?: string;
  readonly path?: readonly unknown[];
  readonly extensions?: { readonly code?: string };
}

interface GraphQLBody {
  readonly data?: { readonly viewer?: Readonly<Record<string, ReadonlyArray<{ readonly rows?: GraphQLRow[] }> | undefined>> } | null;
  readonly errors?: readonly GraphQLError[] | null;
}

/** What a failed answer means and whether to try again. */
export interface Classified {
  readonly reason: AnalyticsFailure;
  readonly retry: boolean;
  readonly message: string;
}

// Messages listed on https://developers.cloudflare.com/analytics/graphql-api/errors/.
const RATE_LIMITED = /rate limit|budget depleted|too many nodes, zones and accounts|consumed excessive resources/i;
const TRY_LATER = /try again later|unable to execute query|too many queries in progress/i;
const NOT_AUTHORIZED = /not authorized|does not have access|^unauthorized$|authz/i;

/** Classifies an HTTP status and GraphQL errors (pure; exported for tests). */
export function classify(status: number, errors: readonly GraphQLError[]): Classified {
  const message =
    errors
      .map((e) => e.message ?? "")
      .filter(Boolean)
      .join("; ") || `HTTP ${status}`;
  const codes = errors.map((e) => e.extensions?.code ?? "");
  if (status === 401 || /^unauthorized$/i.test(message)) return { reason: "unauthenticated", retry: false, message };
  if (status === 403 || codes.includes("authz") || NOT_AUTHORIZED.test(message)) return { reason: "permission", retry: false, message };
  if (status === 429 || RATE_LIMITED.test(message)) return { reason: "rate_limited", retry: true, message };
  if (status === 503 || status === 502 || status === 504 || TRY_LATER.test(message)) return { reason: "unavailable", retry: true, message };
  if (status >= 500) return { reason: "unavailable", retry: true, message };
  return { reason: "bad_query", retry: false, message };
}

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (!header) return null;
  if (/^\d+(\.\d+)?$/.test(header.trim())) return Math.round(Number(header) * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

export class AnalyticsClient {
  readonly #token: string;
  readonly #url: string;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #now: () => number;
  readonly #options: Required<Pick<AnalyticsClientOptions, "maxAttempts" | "baseDelayMs" | "maxDelayMs" | "pageSize" | "maxPages">>;
  readonly #onRetry: AnalyticsClientOptions["onRetry"];

  constructor(options: AnalyticsClientOptions) {
    this.#token = options.token;
    this.#url = options.url ?? GRAPHQL_URL;
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#now = options.now ?? Date.now;
    this.#options = {
      maxAttempts: options.maxAttempts ?? 5,
      baseDelayMs: options.baseDelayMs ?? 1000,
      maxDelayMs: options.maxDelayMs ?? 300_000,
      pageSize: options.pageSize ?? 10_000,
      maxPages: options.maxPages ?? 50,
    };
    this.#onRetry = options.onRetry;
  }

  /** Every group of a dataset in the window, page after page. */
  async rows(spec: DatasetSpec, scopeTag: string, variables: Readonly<Record<string, unknown>>): Promise<GraphQLRow[]> {
    const { pageSize, maxPages } = this.#options;
    const out: GraphQLRow[] = [];
    let after: KeyValue[] | undefined;
    for (let page = 0; page < maxPages; page++) {
      const rows = await this.#send(spec, buildQuery(spec, pageSize, after), { [spec.scope === "account" ? "accountTag" : "zoneTag"]: scopeTag, ...variables });
      out.push(...rows);
      if (spec.keys.length === 0 || rows.length < pageSize) return out;
      after = keyOf(spec, rows[rows.length - 1]!);
    }
    throw new AnalyticsError(
      "too_many_pages",
      spec.dataset,
      `${spec.dataset}: more than ${maxPages} pages of ${pageSize} groups; narrow the window or the scripts`,
    );
  }

  async #send(spec: DatasetSpec, query: string, variables: Readonly<Record<string, unknown>>): Promise<GraphQLRow[]> {
    const { maxAttempts, baseDelayMs, maxDelayMs } = this.#options;
    for (let attempt = 1; ; attempt++) {
      let status = 0;
      let retryAfter: string | null = null;
      let body: GraphQLBody = {};
      try {
        const response = await this.#fetch(this.#url, {
          method: "POST",
          headers: { authorization: `Bearer ${this.#token}`, "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ query, variables }),
        });
        status = response.status;
        retryAfter = response.headers.get("retry-after");
        const text = await response.text();
        try {
          body = JSON.parse(text) as GraphQLBody;
        } catch {
          body = { errors: [{ message: text.slice(0, 200) || `HTTP ${status}` }] };
        }
      } catch (error) {
        body = { errors: [{ message: `network error: ${(error as Error).message}` }] };
        status = 503;
      }
      const errors = body.errors ?? [];
      if (status === 200 && errors.length === 0) return rowsOf(spec, body);
      const verdict = classify(status, errors);
      if (!verdict.retry) throw failure(spec, verdict, variables);
      const delayMs = retryAfterMs(retryAfter, this.#now()) ?? baseDelayMs * 2 ** (attempt - 1);
      if (attempt >= maxAttempts || delayMs > maxDelayMs) {
        const when = delayMs > maxDelayMs ? `; Cloudflare asks to wait ${Math.ceil(delayMs / 1000)} s` : "";
        throw new AnalyticsError(
          verdict.reason,
          spec.dataset,
          `${spec.dataset}: ${verdict.message} (gave up after ${attempt} attempt${attempt === 1 ? "" : "s"}${when}; the API allows 300 queries per 5 minutes)`,
        );
      }
      this.#onRetry?.({ dataset: spec.dataset, attempt, delayMs, reason: verdict.message });
      await this.#sleep(delayMs);
    }
  }
}

function rowsOf(spec: DatasetSpec, body: GraphQLBody): GraphQLRow[] {
  const scopes = body.data?.viewer?.[spec.scope === "account" ? "accounts" : "zones"];
  // An account or zone the token cannot see comes back as an empty list, not an error.
  if (!scopes || scopes.length === 0) throw failure(spec, { reason: "permission", retry: false, message: `no ${spec.scope} in the answer` }, {});
  return scopes[0]!.rows ?? [];
}

function failure(spec: DatasetSpec, verdict: Classified, variables: Readonly<Record<string, unknown>>): AnalyticsError {
  const tag = variables.accountTag ?? variables.zoneTag;
  const which = tag ? `${spec.scope} ${String(tag)}` : `the ${spec.scope}`;
  if (verdict.reason === "permission") {
    return new AnalyticsError(
      "permission",
      spec.dataset,
      `Cloudflare refused ${spec.dataset} for ${which}: "${verdict.message}". The API token needs the "${PERMISSIONS[spec.scope]}" permission for that ${spec.scope}${spec.optional ? " (or the plan does not include these fields)" : ""}.`,
    );
  }
  if (verdict.reason === "unauthenticated") {
    return new AnalyticsError(
      "unauthenticated",
      spec.dataset,
      `Cloudflare did not accept the API token ("${verdict.message}"): check CF_API_TOKEN (missing, expired or revoked)`,
    );
  }
  return new AnalyticsError(verdict.reason, spec.dataset, `${spec.dataset}: Cloudflare refused the query: ${verdict.message}`);
}

/** What to fetch for a run: whose data, which scripts/databases/host, and the window. */
export interface AnalyticsRequest {
  readonly accountTag: string;
  readonly zoneTag?: string | undefined;
  /** Worker scripts; the first is the entry Worker the run's requests reach. Empty: no Worker/DO sections. */
  readonly scripts: readonly string[];
  readonly databases?: readonly string[] | undefined;
  /** Restrict zone requests to this host (the run's target). */
  readonly host?: string | undefined;
  readonly startIso: string;
  readonly endIso: string;
}

/** Everything Cloudflare saw of a run's window. */
export interface CloudflareAnalytics {
  readonly window: { readonly startIso: string; readonly endIso: string };
  /** By minute, script and invocation status. */
  readonly workers: readonly WorkerGroup[];
  /** By minute and script. */
  readonly workersByMinute: readonly WorkerGroup[];
  /** By script over the whole window. */
  readonly workersWindow: readonly WorkerGroup[];
  readonly durableObjects: readonly DurableObjectGroup[];
  readonly d1: readonly D1Group[];
  /** Null without a zone. */
  readonly zone: readonly ZoneGroup[] | null;
  readonly zoneLatency: ZoneLatency | null;
  /** Sections not fetched, and why. */
  readonly unavailable: Readonly<Record<string, string>>;
}

/**
 * Fetches every section for a run's window. Permission and token failures stop everything
 * (the message names the permission); an optional section the API will not give (a field
 * the plan lacks, a product not in use) becomes an entry in `unavailable`.
 */
export async function fetchRunAnalytics(client: AnalyticsClient, request: AnalyticsRequest): Promise<CloudflareAnalytics> {
  const window = { start: request.startIso, end: request.endIso };
  const unavailable: Record<string, string> = {};
  const get = async <T>(spec: DatasetSpec, tag: string, variables: Record<string, unknown>, map: (r: GraphQLRow) => T): Promise<T[]> => {
    try {
      return (await client.rows(spec, tag, { ...window, ...variables })).map(map);
    } catch (error) {
      if (!(error instanceof AnalyticsError) || !spec.optional || error.reason === "unauthenticated" || error.reason === "rate_limited") throw error;
      unavailable[spec.id] = error.message;
      return [];
    }
  };
  const account = request.accountTag;
  const scripts = { scripts: [...request.scripts] };
  const withScripts = request.scripts.length > 0;
  if (!withScripts) unavailable.workers = "no --scripts given: Worker and Durable Object invocations were not queried";
  const workers = withScripts ? await get(WORKER_INVOCATIONS, account, scripts, toWorkerGroup) : [];
  const workersByMinute = withScripts ? await get(WORKER_MINUTES, account, scripts, toWorkerGroup) : [];
  const workersWindow = withScripts ? await get(WORKER_WINDOW, account, scripts, toWorkerGroup) : [];
  const durableObjects = withScripts ? await get(DURABLE_OBJECT_INVOCATIONS, account, scripts, toDurableObjectGroup) : [];
  const databases = request.databases ?? [];
  const d1 = databases.length
    ? await get(withFilter(D1_ANALYTICS, D1_DATABASES_FILTER), account, { databases: [...databases] }, toD1Group)
    : await get(D1_ANALYTICS, account, {}, toD1Group);
  let zone: ZoneGroup[] | null = null;
  let zoneLatency: ZoneLatency | null = null;
  if (request.zoneTag) {
    const host = request.host ? { host: request.host } : {};
    const byHost = (spec: DatasetSpec) => (request.host ? withFilter(spec, ZONE_HOST_FILTER) : spec);
    zone = await get(byHost(ZONE_REQUESTS), request.zoneTag, host, toZoneGroup);
    zoneLatency = (await get(byHost(ZONE_LATENCY), request.zoneTag, host, toZoneLatency))[0] ?? null;
  } else {
    unavailable.zone = "no --zone given: the edge's own request counts were not queried";
  }
  return {
    window: { startIso: request.startIso, endIso: request.endIso },
    workers,
    workersByMinute,
    workersWindow,
    durableObjects,
    d1,
    zone,
    zoneLatency,
    unavailable,
  };
}
