/**
 * A spec's steps: the request each one sends, its checks, captures, think time, the custom
 * metrics it records into, and SSE or scrape behaviour. The same schema decodes the load's
 * `steps` and the run's once-per-run `setup` and `teardown` lists; templates are checked
 * against what is in scope where the step stands (earlier captures, setup values, vars,
 * secrets, seed record fields).
 */
import { z } from "zod";
import { captureError, type CaptureSpec } from "./capture.ts";
import type { Problem } from "./input-problem.ts";
import { parseSeriesSelector } from "../formats/series-selector.ts";
import { templateErrors, type TemplateScope } from "./template.ts";
import type { MetricKind } from "../metrics/thresholds.ts";
import { duration, positiveInt, toProblems } from "./fields.ts";
import { HTTP_METHODS, RECORD_KINDS, type RecordKind, type StepSpec } from "./types.ts";

const check = z
  .object({
    name: z.string().min(1).optional(),
    status: z.union([z.number().int().min(100).max(599), z.array(z.number().int().min(100).max(599)).min(1)]).optional(),
    bodyIncludes: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => c.status !== undefined || c.bodyIncludes !== undefined, { message: "a check needs `status` or `bodyIncludes`" });

const CAPTURE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const RECORD_METRIC_KIND: Readonly<Record<RecordKind, MetricKind>> = { duration: "trend", success: "rate", count: "counter" };

/**
 * Metrics of runs with SSE steps (milliseconds for trends): time to the response headers,
 * to the first event, how long streams stayed open, events received (comments such as
 * heartbeats not counted), and streams that ended before their hold time was over.
 */
export const SSE_METRICS: Readonly<Record<string, MetricKind>> = {
  sse_time_to_open: "trend",
  sse_time_to_first_message: "trend",
  sse_stream_duration: "trend",
  sse_messages: "counter",
  sse_streams_ended_early: "counter",
};

const captureSource = z.union(
  [z.object({ json: z.string().min(1) }).strict(), z.object({ header: z.string().min(1) }).strict(), z.object({ regex: z.string().min(1) }).strict()],
  { message: 'a capture is one of {json: "$.path"}, {header: "name"} or {regex: "pattern"}' },
);

export const step = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, "use 1–64 letters, digits, _ . -")
      .optional(),
    method: z.enum(HTTP_METHODS).default("GET"),
    path: z.string().startsWith("/", "must start with /").default("/"),
    headers: z.record(z.string(), z.string()).default({}),
    body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
    expect: z
      .object({ status: z.union([z.number().int().min(100).max(599), z.array(z.number().int().min(100).max(599)).min(1)]) })
      .strict()
      .optional(),
    weight: positiveInt.max(1000).default(1),
    checks: z.array(check).default([]),
    capture: z.record(z.string().regex(CAPTURE_NAME, "use 1–64 letters, digits and _"), captureSource).default({}),
    think: z.union([duration("think time"), z.object({ min: duration("think time"), max: duration("think time") }).strict()]).optional(),
    record: z.record(z.string(), z.enum(RECORD_KINDS)).default({}),
    sse: z
      .object({ holdFor: duration("hold time").optional() })
      .strict()
      .optional(),
    scrape: z
      .object({ series: z.array(z.string().min(1)).min(1, "name at least one series").max(50) })
      .strict()
      .optional(),
  })
  .strict();

const phaseSteps = z.array(step).min(1, "give at least one step, or leave it out").max(20);

/**
 * The run's setup and teardown steps, run once each (k6's setup() and teardown()): always a
 * sequence; what setup captures is `{{setup.NAME}}` in every later step.
 */
export function runPhases(input: unknown, scope: Omit<StepScope, "setup" | "metrics">, problems: Problem[]) {
  const raw = (typeof input === "object" && input !== null ? input : {}) as { setup?: unknown; teardown?: unknown };
  const decode = (list: "setup" | "teardown", setupNames: ReadonlySet<string>): StepSpec[] => {
    if (raw[list] === undefined) return [];
    const parsed = phaseSteps.safeParse(raw[list]);
    if (!parsed.success) {
      problems.push(...toProblems(parsed.error, [list]));
      return [];
    }
    parsed.data.forEach((s, i) => {
      for (const key of ["record", "sse", "scrape", "think"] as const) {
        const value = s[key];
        // `record` defaults to {}: only a non-empty one is a problem.
        if (value !== undefined && !(key === "record" && Object.keys(value).length === 0)) {
          problems.push({ field: `${list}.${i}.${key}`, detail: `${list} steps run once outside the load; ${key} applies to the load's steps` });
        }
      }
    });
    return stepSpecs(parsed.data, list, { ...scope, metrics: {}, setup: setupNames }, problems);
  };
  const setup = decode("setup", new Set());
  const setupNames = new Set(setup.flatMap((s) => Object.keys(s.capture)));
  return { setup, teardown: decode("teardown", setupNames), setupNames };
}

export type RawStep = z.output<typeof step>;

export interface StepScope {
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: Readonly<Record<string, string>>;
  readonly metrics: Readonly<Record<string, { type: MetricKind }>>;
  /** Names the run's setup steps capture, for `{{setup.NAME}}`. */
  readonly setup: ReadonlySet<string>;
  /** Whether the spec reads seed records (`{{data.FIELD}}`). */
  readonly data?: boolean;
}

/**
 * Decoded steps of one list (`steps`, `setup` or `teardown`): templates checked against
 * what earlier steps capture, records against declared metrics, names made unique.
 */
export function stepSpecs(raw: readonly RawStep[], list: string, scope: StepScope, problems: Problem[]): StepSpec[] {
  const b = scope;
  const names = new Set<string>();
  const capturedBefore = new Set<string>();
  const setup = Object.fromEntries([...scope.setup].map((n) => [n, ""]));
  return raw.map((s, i, all) => {
    // `{{captured.X}}` must name a value an earlier step captures (in list order).
    const templateScope: TemplateScope = { vars: b.vars, secrets: b.secrets, captured: new Set(capturedBefore), setup, data: scope.data ?? false };
    for (const [name, source] of Object.entries(s.capture)) {
      const error = captureError(source as CaptureSpec);
      if (error) problems.push({ field: `${list}.${i}.capture.${name}`, detail: error });
      capturedBefore.add(name);
    }
    for (const [metric, what] of Object.entries(s.record)) {
      const declared = b.metrics[metric]?.type;
      if (!declared)
        problems.push({
          field: `${list}.${i}.record.${metric}`,
          detail: `declare it under metrics first, e.g. "metrics": {"${metric}": {"type": "${RECORD_METRIC_KIND[what]}"}}`,
        });
      else if (declared !== RECORD_METRIC_KIND[what])
        problems.push({ field: `${list}.${i}.record.${metric}`, detail: `"${what}" goes into a ${RECORD_METRIC_KIND[what]}, but ${metric} is a ${declared}` });
    }
    const think = s.think === undefined ? null : typeof s.think === "number" ? { minMs: s.think, maxMs: s.think } : { minMs: s.think.min, maxMs: s.think.max };
    if (think && think.maxMs < think.minMs) problems.push({ field: `${list}.${i}.think.max`, detail: "must be at least min" });
    const name = s.name ?? (all.length === 1 ? "default" : `step${i + 1}`);
    if (names.has(name)) problems.push({ field: `${list}.${i}.name`, detail: `duplicate step name "${name}"` });
    names.add(name);
    const body = s.body === undefined ? null : typeof s.body === "string" ? s.body : JSON.stringify(s.body);
    const headers = { ...s.headers };
    if (s.body !== undefined && typeof s.body !== "string" && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    const templated: [string, string][] = [["path", s.path], ...Object.entries(headers).map(([k, v]) => [`headers.${k}`, v] as [string, string])];
    if (body !== null) templated.push(["body", body]);
    for (const [field, text] of templated) {
      for (const detail of templateErrors(text, templateScope)) problems.push({ field: `${list}.${i}.${field}`, detail });
    }
    if (s.method === "GET" || s.method === "HEAD") {
      if (body !== null) problems.push({ field: `${list}.${i}.body`, detail: `a ${s.method} request cannot have a body` });
    }
    if (s.sse && s.scrape) problems.push({ field: `${list}.${i}.scrape`, detail: "a step is either an SSE stream or a scrape" });
    if ((s.sse || s.scrape) && s.method !== "GET") problems.push({ field: `${list}.${i}.method`, detail: `${s.sse ? "an SSE stream" : "a scrape"} is a GET` });
    for (const [j, selector] of (s.scrape?.series ?? []).entries()) {
      const parsed = parseSeriesSelector(selector);
      if (!parsed.ok) problems.push({ field: `${list}.${i}.scrape.series.${j}`, detail: parsed.error.detail });
    }
    if (s.sse && !Object.keys(headers).some((h) => h.toLowerCase() === "accept")) headers.accept = "text/event-stream";
    const asList = (v: number | number[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
    return {
      name,
      method: s.method,
      path: s.path,
      headers,
      body,
      expectedStatuses: asList(s.expect?.status) ?? null,
      weight: s.weight,
      checks: s.checks.map((c, j) => ({
        name:
          c.name ??
          (c.status !== undefined ? `status is ${asList(c.status)!.join(" or ")}` : `body includes ${JSON.stringify(c.bodyIncludes)}`) +
            (s.checks.length > 1 && !c.name ? ` #${j + 1}` : ""),
        ...(c.status !== undefined ? { status: asList(c.status)! } : {}),
        ...(c.bodyIncludes !== undefined ? { bodyIncludes: c.bodyIncludes } : {}),
      })),
      capture: s.capture as Record<string, CaptureSpec>,
      think,
      record: s.record,
      sse: s.sse ? { holdMs: s.sse.holdFor ?? null } : null,
      scrape: s.scrape ? { series: s.scrape.series } : null,
    };
  });
}

/** Whether raw input has an SSE step (its metrics then exist for thresholds). */
export function hasSseStep(input: unknown): boolean {
  const steps = (input as { steps?: unknown } | null)?.steps;
  return Array.isArray(steps) && steps.some((st) => typeof st === "object" && st !== null && "sse" in st);
}
