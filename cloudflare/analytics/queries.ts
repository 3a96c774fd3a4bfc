/**
 * The Cloudflare GraphQL Analytics queries `edgeload cf-analytics` sends, as constants, and
 * the typed groups their answers become. Each spec cites the documentation page its
 * dataset, filter and response shape come from; SHAPES.md beside this file says, field by
 * field, which names are on a doc page and which come from the schema (introspection).
 *
 * Every query aliases its dataset as `rows` (GraphQL aliases, as in the `series:` alias of
 * https://developers.cloudflare.com/analytics/graphql-api/migration-guides/graphql-api-analytics/),
 * so one reader serves them all: `data.viewer.accounts[0].rows` or `data.viewer.zones[0].rows`.
 *
 * Pure: no I/O. client.ts sends them.
 */

/** Whether a dataset hangs under `viewer.accounts(filter: {accountTag})` or `viewer.zones(filter: {zoneTag})`. */
export type Scope = "account" | "zone";

/** One dataset query: its filter, selection and the dimensions it groups (and pages) by. */
export interface DatasetSpec {
  readonly id: DatasetId;
  readonly scope: Scope;
  readonly dataset: string;
  /** Extra GraphQL variables beyond the scope tag, `$start` and `$end`: name → type. */
  readonly variables: Readonly<Record<string, string>>;
  /** Filter entries besides the time range, e.g. `scriptName_in: $scripts`. */
  readonly filter: readonly string[];
  readonly selection: string;
  /**
   * The group's dimensions in sort order. Pages are cut by these keys (orderBy ASC, next
   * page filtered past the last row's key); an empty list is one group, one page.
   */
  readonly keys: readonly string[];
  /** A section that may be missing (plan-dependent fields, products not in use). */
  readonly optional: boolean;
  /** The doc page the dataset, its filter and response shape come from. */
  readonly docs: string;
}

export type DatasetId = "workers" | "workersByMinute" | "workersWindow" | "durableObjects" | "d1" | "zoneRequests" | "zoneLatency";

const WORKERS_DOC = "https://developers.cloudflare.com/analytics/graphql-api/tutorials/querying-workers-metrics/";

/**
 * Invocation counters and quantiles. `cpuTime*` and `wallTime*` quantiles are microseconds;
 * `duration*` is execution duration in GB-seconds (a billing figure, not a latency:
 * https://developers.cloudflare.com/workers/observability/metrics-and-analytics/#execution-duration-gb-seconds).
 * The schema has no P95 on this dataset (P25, P50, P75, P90, P99, P999), so the latency
 * comparison uses p50 and p99 on both sides.
 */
const WORKER_SELECTION =
  "sum { requests errors subrequests } quantiles { cpuTimeP50 cpuTimeP99 wallTimeP50 wallTimeP99 durationP50 durationP99 } avg { sampleInterval }";

function workerSpec(id: DatasetId, keys: readonly string[]): DatasetSpec {
  return {
    id,
    scope: "account",
    dataset: "workersInvocationsAdaptive",
    variables: { scripts: "[string!]!" },
    filter: ["scriptName_in: $scripts"],
    selection: WORKER_SELECTION,
    keys,
    optional: false,
    docs: WORKERS_DOC,
  };
}

/** Worker invocations by minute, script and invocation status (`success`, `scriptThrewException`, …). */
export const WORKER_INVOCATIONS = workerSpec("workers", ["datetimeMinute", "scriptName", "status"]);
/** One group per script and minute: Cloudflare's own quantiles over every invocation of that minute. */
export const WORKER_MINUTES = workerSpec("workersByMinute", ["datetimeMinute", "scriptName"]);
/** One group per script over the whole window: exact whole-window quantiles, no merging needed. */
export const WORKER_WINDOW = workerSpec("workersWindow", ["scriptName"]);

/** Durable Object invocations per script and namespace; wall time in microseconds. */
export const DURABLE_OBJECT_INVOCATIONS: DatasetSpec = {
  id: "durableObjects",
  scope: "account",
  dataset: "durableObjectsInvocationsAdaptiveGroups",
  variables: { scripts: "[string!]!" },
  filter: ["scriptName_in: $scripts"],
  selection: "sum { requests errors wallTime } quantiles { wallTimeP50 wallTimeP99 }",
  keys: ["scriptName", "namespaceId"],
  optional: true,
  docs: "https://developers.cloudflare.com/durable-objects/observability/metrics-and-analytics/",
};

/**
 * D1 queries and rows per database and minute. The D1 page's examples filter by `date`;
 * this filters by `datetime` (the Time-typed range every adaptive dataset takes) so that
 * only the run's minutes count.
 */
export const D1_ANALYTICS: DatasetSpec = {
  id: "d1",
  scope: "account",
  dataset: "d1AnalyticsAdaptiveGroups",
  variables: {},
  filter: [],
  selection: "sum { readQueries writeQueries rowsRead rowsWritten } quantiles { queryBatchTimeMsP90 }",
  keys: ["datetimeMinute", "databaseId"],
  optional: true,
  docs: "https://developers.cloudflare.com/d1/observability/metrics-analytics/",
};

/** Restricts D1 to some databases. */
export const D1_DATABASES_FILTER = { variables: { databases: "[string!]!" }, filter: ["databaseId_in: $databases"] } as const;

/** Requests the zone's edge answered, by minute, edge status and data center. */
export const ZONE_REQUESTS: DatasetSpec = {
  id: "zoneRequests",
  scope: "zone",
  dataset: "httpRequestsAdaptiveGroups",
  variables: {},
  filter: [],
  selection: "count avg { sampleInterval }",
  keys: ["datetimeMinute", "edgeResponseStatus", "coloCode"],
  optional: false,
  docs: "https://developers.cloudflare.com/analytics/graphql-api/migration-guides/graphql-api-analytics/",
};

/**
 * Edge TTFB and origin duration quantiles (ms) over the whole window, as one group. These
 * fields depend on the zone's plan; without them the section is reported unavailable.
 */
export const ZONE_LATENCY: DatasetSpec = {
  id: "zoneLatency",
  scope: "zone",
  dataset: "httpRequestsAdaptiveGroups",
  variables: {},
  filter: [],
  selection:
    "count quantiles { edgeTimeToFirstByteMsP50 edgeTimeToFirstByteMsP95 edgeTimeToFirstByteMsP99 originResponseDurationMsP50 originResponseDurationMsP95 originResponseDurationMsP99 }",
  keys: [],
  optional: true,
  docs: "https://developers.cloudflare.com/analytics/graphql-api/features/filtering/",
};

/** Restricts zone requests to one host (the run's target), as in the end-customer tutorial. */
export const ZONE_HOST_FILTER = { variables: { host: "string!" }, filter: ["clientRequestHTTPHost: $host"] } as const;

/** A spec with extra filter entries (and their variables). */
export function withFilter(
  spec: DatasetSpec,
  extra: { readonly variables: Readonly<Record<string, string>>; readonly filter: readonly string[] },
): DatasetSpec {
  return { ...spec, variables: { ...spec.variables, ...extra.variables }, filter: [...spec.filter, ...extra.filter] };
}

/** A dimension value as the API returns it: strings, or numbers for e.g. `edgeResponseStatus`. */
export type KeyValue = string | number;

/**
 * The query text for one page. `after` is the previous page's last key: rows strictly
 * after it in (k1, k2, …) order, i.e. `k1 > v1 OR (k1 = v1 AND k2 > v2) OR …` — the
 * filter-based paging of https://developers.cloudflare.com/analytics/graphql-api/features/pagination/
 * made exact for several dimensions (the API has no cursors).
 */
export function buildQuery(spec: DatasetSpec, limit: number, after?: readonly KeyValue[]): string {
  const tag = spec.scope === "account" ? "accountTag" : "zoneTag";
  const variables = [`$${tag}: string!`, "$start: Time!", "$end: Time!", ...Object.entries(spec.variables).map(([k, t]) => `$${k}: ${t}`)];
  const filter = ["datetime_geq: $start", "datetime_leq: $end", ...spec.filter];
  if (after && spec.keys.length) filter.push(`OR: [${spec.keys.map((_, i) => pageBranch(spec.keys, after, i)).join(", ")}]`);
  const args = [
    `limit: ${limit}`,
    ...(spec.keys.length ? [`orderBy: [${spec.keys.map((k) => `${k}_ASC`).join(", ")}]`] : []),
    `filter: { ${filter.join(", ")} }`,
  ];
  const dimensions = spec.keys.length ? ` dimensions { ${spec.keys.join(" ")} }` : "";
  return [
    `query Edgeload_${spec.id}(${variables.join(", ")}) {`,
    `  viewer {`,
    `    ${spec.scope === "account" ? "accounts" : "zones"}(filter: { ${tag}: $${tag} }) {`,
    `      rows: ${spec.dataset}(${args.join(", ")}) { ${spec.selection}${dimensions} }`,
    `    }`,
    `  }`,
    `}`,
  ].join("\n");
}

function pageBranch(keys: readonly string[], after: readonly KeyValue[], i: number): string {
  const equal = keys.slice(0, i).map((k, j) => `${k}: ${literal(after[j]!)}`);
  return `{ ${[...equal, `${keys[i]}_gt: ${literal(after[i]!)}`].join(", ")} }`;
}

/** A GraphQL literal: JSON strings are valid GraphQL strings; numbers stay numbers (e.g. status codes). */
function literal(v: KeyValue): string {
  return typeof v === "number" ? String(v) : JSON.stringify(v);
}

/** One group as the API returns it (only the parts a selection asks for are present). */
export interface GraphQLRow {
  readonly dimensions?: Readonly<Record<string, KeyValue>>;
  readonly sum?: Readonly<Record<string, number | null>>;
  readonly quantiles?: Readonly<Record<string, number | null>>;
  readonly avg?: Readonly<Record<string, number | null>>;
  readonly count?: number;
}

/** A row's dimension values in the spec's key order. */
export function keyOf(spec: DatasetSpec, row: GraphQLRow): KeyValue[] {
  return spec.keys.map((k) => row.dimensions?.[k] ?? "");
}

export interface WorkerGroup {
  /** Start of the minute (ISO), or null for whole-window groups. */
  readonly minute: string | null;
  readonly script: string;
  /** Invocation status (not an HTTP status), or null when not grouped by it. */
  readonly status: string | null;
  readonly requests: number;
  readonly errors: number;
  readonly subrequests: number;
  readonly cpuP50Ms: number | null;
  readonly cpuP99Ms: number | null;
  readonly wallP50Ms: number | null;
  readonly wallP99Ms: number | null;
  readonly durationP50GbS: number | null;
  readonly durationP99GbS: number | null;
  /** Average sampling interval: 1 means every invocation was counted; 10 means 1 in 10, scaled up. */
  readonly sampleInterval: number | null;
}

export interface DurableObjectGroup {
  readonly script: string;
  readonly namespaceId: string;
  readonly requests: number;
  readonly errors: number;
  readonly wallTimeTotalMs: number | null;
  readonly wallP50Ms: number | null;
  readonly wallP99Ms: number | null;
}

export interface D1Group {
  readonly minute: string;
  readonly databaseId: string;
  readonly readQueries: number;
  readonly writeQueries: number;
  readonly rowsRead: number;
  readonly rowsWritten: number;
  readonly queryBatchP90Ms: number | null;
}

export interface ZoneGroup {
  readonly minute: string;
  readonly status: number;
  readonly colo: string;
  /** Requests the edge answered (an estimate when sampleInterval > 1). */
  readonly count: number;
  readonly sampleInterval: number | null;
}

export interface Quantiles3 {
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
}

export interface ZoneLatency {
  readonly count: number;
  readonly edgeTtfbMs: Quantiles3;
  readonly originMs: Quantiles3;
}

const num = (v: number | null | undefined): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const opt = (v: number | null | undefined): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const usToMs = (v: number | null | undefined): number | null => (opt(v) === null ? null : num(v) / 1000);
const dim = (row: GraphQLRow, k: string): string => String(row.dimensions?.[k] ?? "");

export function toWorkerGroup(row: GraphQLRow): WorkerGroup {
  const q = row.quantiles ?? {};
  return {
    minute: row.dimensions?.datetimeMinute === undefined ? null : dim(row, "datetimeMinute"),
    script: dim(row, "scriptName"),
    status: row.dimensions?.status === undefined ? null : dim(row, "status"),
    requests: num(row.sum?.requests),
    errors: num(row.sum?.errors),
    subrequests: num(row.sum?.subrequests),
    cpuP50Ms: usToMs(q.cpuTimeP50),
    cpuP99Ms: usToMs(q.cpuTimeP99),
    wallP50Ms: usToMs(q.wallTimeP50),
    wallP99Ms: usToMs(q.wallTimeP99),
    durationP50GbS: opt(q.durationP50),
    durationP99GbS: opt(q.durationP99),
    sampleInterval: opt(row.avg?.sampleInterval),
  };
}

export function toDurableObjectGroup(row: GraphQLRow): DurableObjectGroup {
  return {
    script: dim(row, "scriptName"),
    namespaceId: dim(row, "namespaceId"),
    requests: num(row.sum?.requests),
    errors: num(row.sum?.errors),
    wallTimeTotalMs: usToMs(row.sum?.wallTime),
    wallP50Ms: usToMs(row.quantiles?.wallTimeP50),
    wallP99Ms: usToMs(row.quantiles?.wallTimeP99),
  };
}

export function toD1Group(row: GraphQLRow): D1Group {
  const s = row.sum ?? {};
  return {
    minute: dim(row, "datetimeMinute"),
    databaseId: dim(row, "databaseId"),
    readQueries: num(s.readQueries),
    writeQueries: num(s.writeQueries),
    rowsRead: num(s.rowsRead),
    rowsWritten: num(s.rowsWritten),
    queryBatchP90Ms: opt(row.quantiles?.queryBatchTimeMsP90),
  };
}

export function toZoneGroup(row: GraphQLRow): ZoneGroup {
  return {
    minute: dim(row, "datetimeMinute"),
    status: Number(row.dimensions?.edgeResponseStatus ?? 0),
    colo: dim(row, "coloCode"),
    count: num(row.count),
    sampleInterval: opt(row.avg?.sampleInterval),
  };
}

export function toZoneLatency(row: GraphQLRow): ZoneLatency {
  const q = row.quantiles ?? {};
  const three = (name: string): Quantiles3 => ({ p50: opt(q[`${name}P50`]), p95: opt(q[`${name}P95`]), p99: opt(q[`${name}P99`]) });
  return { count: num(row.count), edgeTtfbMs: three("edgeTimeToFirstByteMs"), originMs: three("originResponseDurationMs") };
}
