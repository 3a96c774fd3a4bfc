/**
 * A small client for the edgeload HTTP API, used by the CLI, tests and the benchmark.
 * Problem responses (RFC 9457) become ApiProblem errors carrying every listed problem; an
 * API that cannot be asked at all becomes ApiUnreachable, naming its URL.
 */
import type { DeploymentProbe } from "../core/plan/latency-probe.ts";
import type { Comparison } from "../core/results/compare.ts";
import type { K6ImportView } from "../core/formats/k6-summary.ts";
import type { QueryRow } from "../core/results/query.ts";
import { FINAL_STATUSES, type RunView } from "../core/run/protocol.ts";
import type { Summary } from "../core/run/summary.ts";
import type { LivePoint } from "../core/run/live-view.ts";
import type { ReportInput } from "../reports/report-input.ts";
import { createSseReader } from "../core/formats/sse.ts";

export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly problems?: ReadonlyArray<{ field: string; detail: string }>;
}

export class ApiProblem extends Error {
  readonly status: number;
  readonly body: ProblemBody;

  constructor(body: ProblemBody) {
    const lines = [`${body.title}: ${body.detail}`, ...(body.problems ?? []).map((p) => `  - ${p.field}: ${p.detail}`)];
    super(lines.join("\n"));
    this.status = body.status;
    this.body = body;
  }
}

/**
 * The API could not be asked: nothing answered at its URL, it did not answer in time, or
 * what answered was not an edgeload API (a body that is not JSON). Its own error, so the
 * CLI can say which URL failed and callers never mistake it for an answer.
 */
export class ApiUnreachable extends Error {
  readonly reason: "unreachable" | "timeout" | "not-json";

  constructor(reason: ApiUnreachable["reason"], message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface CreatedRun {
  readonly id: string;
  readonly status: string;
  readonly startsAt: string;
  readonly plan: { shards: ReadonlyArray<{ index: number; region: string }>; notes: readonly string[] };
  readonly links: Record<string, string>;
}

/** GET /v1/runs/:a/compare/:b: the comparison and the runs it resolved. */
export interface ComparisonResponse extends Comparison {
  readonly baseline: { readonly id: string; readonly baseline?: string; readonly status: string };
  readonly candidate: { readonly id: string; readonly baseline?: string; readonly status: string };
  readonly trend: string;
}

/** GET or POST /v1/targets/:host/verification. */
export interface TargetVerification {
  readonly host: string;
  readonly required: boolean;
  readonly why: string;
  readonly state: "verified" | "expired" | "unverified";
  readonly method: "dns" | "well-known" | null;
  readonly verifiedAt: string | null;
  readonly expiresAt: string | null;
  readonly checkedAt: string | null;
  readonly lastCheck: string | null;
  readonly publish: {
    readonly dns: { readonly name: string; readonly type: "TXT"; readonly value: string };
    readonly wellKnown: { readonly url: string; readonly line: string };
  };
  readonly instructions: string;
  /** POST only: what each way found. */
  readonly findings?: ReadonlyArray<{ readonly method: "dns" | "well-known"; readonly found: boolean; readonly detail: string }>;
}

/** How long one API call may take before it counts as unanswered. */
const CALL_TIMEOUT_MS = 30_000;

/** The page a dashboard link opens (POST /v1/dashboard-links). */
export type DashboardView =
  | { readonly run?: undefined; readonly schedule?: undefined; readonly compare?: undefined }
  | { readonly run: string; readonly abort?: boolean }
  | { readonly schedule: string }
  | { readonly compare: readonly [string, string] };

/** What PATCH /v1/runs/:id/control answers: the level now held, and how many shards heard it. */
export interface ControlAnswer {
  readonly id: string;
  readonly vus: number;
  readonly paused: boolean;
  readonly maxVUs: number;
  readonly shardsTold: number;
  readonly shards: number;
}

export class EdgeloadClient {
  readonly baseUrl: string;
  readonly #token: string;

  constructor(baseUrl: string, token: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#token = token;
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.#token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      if ((error as Error).name === "TimeoutError")
        throw new ApiUnreachable("timeout", `the edgeload API at ${this.baseUrl} did not answer ${method} ${path} within ${CALL_TIMEOUT_MS / 1000} s`);
      // undici's "fetch failed" keeps the reason (ECONNREFUSED, ENOTFOUND, …) in its cause.
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiUnreachable("unreachable", `cannot reach the edgeload API at ${this.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    if (!response.ok) {
      if ((response.headers.get("content-type") ?? "").includes("problem+json")) throw new ApiProblem(JSON.parse(text) as ProblemBody);
      throw new ApiProblem({ type: "about:blank", title: `HTTP ${response.status}`, status: response.status, detail: text.slice(0, 300) });
    }
    if (response.status === 204) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiUnreachable("not-json", `${this.baseUrl} answered ${method} ${path} with something other than JSON: is it an edgeload API?`);
    }
  }

  /** Uploads a k6 script bundle under the SHA-256 of its JSON (PUT /v1/scripts/:id). */
  uploadScript(id: string, modules: Readonly<Record<string, string>>): Promise<{ id: string; bytes: number }> {
    return this.#call("PUT", `/v1/scripts/${id}`, modules);
  }

  /** What the deployment would do with a spec, and whether its allow-list takes the target (POST /v1/plan). */
  planRun(spec: unknown): Promise<{ target: { url: string; allowed: boolean; detail?: string } }> {
    return this.#call("POST", "/v1/plan", spec);
  }

  /** The target's time to first byte from each region of the run, one shard a region (POST /v1/probe). */
  probeTarget(spec: unknown): Promise<DeploymentProbe> {
    return this.#call("POST", "/v1/probe", spec);
  }

  /**
   * Proof of a target's ownership (coordinator/http/targets-api.ts): GET reads what to publish
   * and the last check, POST checks now. `target` is the URL the host is loaded as.
   */
  targetVerification(method: "GET" | "POST", host: string, target?: string): Promise<TargetVerification> {
    return this.#call(method, `/v1/targets/${encodeURIComponent(host)}/verification${target ? `?target=${encodeURIComponent(target)}` : ""}`);
  }

  /** Scheduled runs (docs/schedules.md): `action` is "" (get), "pause" or "resume". */
  schedules<T>(method: "GET" | "POST" | "DELETE", id = "", action = "", body?: unknown): Promise<T> {
    return this.#call(method, `/v1/schedules${id ? `/${encodeURIComponent(id)}` : ""}${action ? `/${action}` : ""}`, body);
  }

  createRun(spec: unknown): Promise<CreatedRun> {
    return this.#call("POST", "/v1/runs", spec);
  }

  getRun(id: string): Promise<RunView> {
    return this.#call("GET", `/v1/runs/${id}`);
  }

  summary(id: string): Promise<Summary> {
    return this.#call("GET", `/v1/runs/${id}/summary`);
  }

  timeseries(id: string): Promise<{ points: Array<Record<string, unknown>> }> {
    return this.#call("GET", `/v1/runs/${id}/timeseries`);
  }

  /** Analytics over a run's stored windows (core/results/query.ts): `by`, `every`, `metrics`, `trend`. */
  query(id: string, params: Readonly<Record<string, string>>): Promise<{ rows: QueryRow[] }> {
    return this.#call("GET", `/v1/runs/${id}/query?${new URLSearchParams(params)}`);
  }

  /** What a run's report is made from (summary, query rows, latency histogram): GET /v1/runs/:id/report?format=json. */
  reportInput(id: string): Promise<ReportInput> {
    return this.#call("GET", `/v1/runs/${id}/report?format=json`);
  }

  /** Read-only SQL against the results database. */
  sql(sql: string, params: readonly unknown[] = []): Promise<{ rows: Record<string, unknown>[]; truncated: boolean }> {
    return this.#call("POST", "/v1/sql", { sql, params });
  }

  /**
   * Compares a candidate run with a baseline (a run id or a baseline name); `params` are
   * the practical minimums and confidence (`minEffect`, `minLatency`, `minRate`, `confidence`).
   */
  compare(baseline: string, candidate: string, params: Readonly<Record<string, string>> = {}): Promise<ComparisonResponse> {
    return this.#call("GET", `/v1/runs/${encodeURIComponent(baseline)}/compare/${encodeURIComponent(candidate)}?${new URLSearchParams(params)}`);
  }

  /** Saves (or moves) a baseline name to a run that has ended. */
  saveBaseline(name: string, runId: string): Promise<{ name: string; runId: string; createdAt: string; previousRunId?: string }> {
    return this.#call("PUT", `/v1/baselines/${encodeURIComponent(name)}`, { runId });
  }

  listBaselines(): Promise<{ baselines: Array<{ name: string; runId: string; createdAt: string; run: { name: string; status: string } | null }> }> {
    return this.#call("GET", "/v1/baselines");
  }

  /** Imports a k6 summary beside a run and compares them (POST /v1/runs/:id/crosscheck). */
  crosscheck(id: string, k6Summary: unknown): Promise<K6ImportView> {
    return this.#call("POST", `/v1/runs/${encodeURIComponent(id)}/crosscheck`, k6Summary);
  }

  /** The k6 summaries imported beside a run, each compared with it. */
  crosschecks(id: string): Promise<{ runId: string; imports: K6ImportView[] }> {
    return this.#call("GET", `/v1/runs/${encodeURIComponent(id)}/crosscheck`);
  }

  /** A run's status and its spec as stored (secrets redacted), or null for an unknown run. */
  async runRecord(id: string): Promise<{ status: RunView["status"]; spec: Record<string, unknown> } | null> {
    const { rows } = await this.sql("SELECT status, spec_json FROM runs WHERE id = ?", [id]);
    const row = rows[0] as { status: RunView["status"]; spec_json: string } | undefined;
    return row ? { status: row.status, spec: JSON.parse(row.spec_json) as Record<string, unknown> } : null;
  }

  /**
   * A single-use view link (10 minutes) to one dashboard page: a run's (`abort`: its Abort
   * button works), a schedule's, two runs compared, or with no view the runs list.
   */
  dashboardLink(view: DashboardView = {}): Promise<{ url: string; expiresAt: string }> {
    return this.#call("POST", "/v1/dashboard-links", view);
  }

  abort(id: string): Promise<RunView> {
    return this.#call("POST", `/v1/runs/${id}/abort`);
  }

  /** An externally-controlled run's VUs and/or pause (PATCH /v1/runs/:id/control). */
  control(id: string, change: { vus?: number; paused?: boolean }): Promise<ControlAnswer> {
    return this.#call("PATCH", `/v1/runs/${encodeURIComponent(id)}/control`, change);
  }

  uploadSeed(name: string, doc: unknown): Promise<{ name: string; total: number; counts: Record<string, number>; sha256: string }> {
    return this.#call("PUT", `/v1/seeds/${encodeURIComponent(name)}`, doc);
  }

  seedUrl(name: string, request: { expiresIn?: string; format?: "object" | "array"; type?: string } = {}): Promise<{ url: string; expiresAt: string }> {
    return this.#call("POST", `/v1/seeds/${encodeURIComponent(name)}/url`, request);
  }

  listSeeds(): Promise<{ seeds: Array<Record<string, unknown>> }> {
    return this.#call("GET", "/v1/seeds");
  }

  listRuns(limit = 20): Promise<{ runs: Array<Record<string, unknown>> }> {
    return this.#call("GET", `/v1/runs?limit=${limit}`);
  }

  /**
   * Follows a run to its end on its live event stream (GET /v1/runs/:id/live): one request
   * for the whole run, and `onProgress` with each `status` event (one per coordinator tick).
   * Polling the status once a second instead cost the local stack ~5 ms of its one thread
   * per poll (a request through workerd's entry, assets and API layers, then the object),
   * and requests its shards had in flight waited for it. When the stream cannot be opened
   * or ends before the run does, it polls (waitForEnd). `onWindow` gets each window the
   * stream carries (those so far first): `edgeload run` prints a k6 script's output from them.
   */
  async follow(
    id: string,
    onProgress: (view: RunView) => void,
    { maxWaitMs = 6 * 3600_000, onWindow = () => {} }: { maxWaitMs?: number; onWindow?: (point: LivePoint) => void } = {},
  ): Promise<RunView> {
    const deadline = Date.now() + maxWaitMs;
    const streamed = await this.#followStream(id, onProgress, onWindow, maxWaitMs).catch(() => "lost" as const);
    if (streamed === "ended") {
      const view = await this.getRun(id);
      if (FINAL_STATUSES.includes(view.status)) return view;
    }
    if (Date.now() > deadline) throw new Error(`run ${id} did not finish within ${maxWaitMs / 1000}s`);
    return this.waitForEnd(id, onProgress, 1000, deadline - Date.now());
  }

  /** Reads the run's events until its `end` event ("ended") or the stream stops ("lost"). */
  async #followStream(id: string, onProgress: (view: RunView) => void, onWindow: (point: LivePoint) => void, maxWaitMs: number): Promise<"ended" | "lost"> {
    const response = await fetch(`${this.baseUrl}/v1/runs/${id}/live`, {
      headers: { authorization: `Bearer ${this.#token}`, accept: "text/event-stream" },
      signal: AbortSignal.timeout(maxWaitMs),
    });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      return "lost";
    }
    let ended = false;
    const reader = createSseReader((event) => {
      if (event.event === "status") onProgress(JSON.parse(event.data) as RunView);
      else if (event.event === "window") onWindow(JSON.parse(event.data) as LivePoint);
      else if (event.event === "history") for (const point of JSON.parse(event.data) as LivePoint[]) onWindow(point);
      else if (event.event === "end") ended = true;
    });
    const body = response.body.getReader();
    try {
      while (!ended) {
        const { done, value } = await body.read();
        if (done) break;
        reader.push(value);
      }
    } finally {
      await body.cancel().catch(() => {});
    }
    reader.end();
    return ended ? "ended" : "lost";
  }

  /** Polls until the run reaches a final status, calling `onProgress` every `everyMs`. */
  async waitForEnd(id: string, onProgress: (view: RunView) => void, everyMs = 1000, maxWaitMs = 6 * 3600_000): Promise<RunView> {
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      const view = await this.getRun(id);
      onProgress(view);
      if (FINAL_STATUSES.includes(view.status)) return view;
      if (Date.now() > deadline) throw new Error(`run ${id} did not finish within ${maxWaitMs / 1000}s`);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}
