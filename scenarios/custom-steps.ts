/**
 * The flow of a spec without a built-in scenario: its own steps, with `{{…}}` templates
 * compiled once and k6-style checks.
 *
 * `flow: "pick"` (the default): one request per iteration, the step chosen by weight
 * (smooth weighted round-robin over the iteration index). `flow: "sequence"`: every step
 * in order, like a k6 default function making several requests.
 *
 * After each request, in this order: checks; captures (core/spec/capture.ts) into the
 * captured map that later templates read as `{{captured.NAME}}`; records into declared
 * custom metrics (`duration` → the request's http_req_duration into a trend, `success` →
 * expected status, checks and captures all good into a rate, `count` → a counter); then
 * the step's think time. A scrape step (`scrape.series`) parses the Prometheus text it
 * got and stores the chosen series' samples with the run (a check: every series found).
 * An SSE step (`sse`) is read by the engine for its hold time (see ShardEngine.send)
 * before the flow goes on. A capture that finds nothing counts as a failed check on its
 * step and ends the iteration after that step's think time: the steps after it are
 * skipped, since they would send a request built from a missing value.
 */
import { interleaveCycle } from "../core/data/interleave.ts";
import { isExpectedStatus } from "../core/metrics/request-trail.ts";
import type { RecordKind, RunSpec } from "../core/spec/types.ts";
import { parsePrometheusText } from "../core/formats/prometheus-text-parser.ts";
import { parseSeriesSelector, selectSamples, type SeriesSelector } from "../core/formats/series-selector.ts";
import { recordPicker, type SeedRecord } from "../core/data/seed-records.ts";
import { compileTemplate, type Template, type TemplateContext } from "../core/spec/template.ts";
import { compileCapture, readsBody, type Extractor } from "../core/spec/capture.ts";
import type { Flow, FlowIO, FlowResponse, IterationInfo } from "./flow.ts";

interface CompiledStep {
  readonly url: Template;
  readonly method: string;
  readonly headers: ReadonlyArray<readonly [string, Template]>;
  readonly constantHeaders: Record<string, string> | null;
  readonly body: Template | null;
  readonly expect: ReadonlySet<number> | null;
  readonly checks: ReadonlyArray<{ status?: ReadonlySet<number>; bodyIncludes?: string }>;
  readonly captures: ReadonlyArray<readonly [string, Extractor]>;
  readonly record: ReadonlyArray<readonly [string, RecordKind]>;
  readonly think: { readonly minMs: number; readonly maxMs: number } | null;
  readonly readBody: boolean;
  readonly stream: { readonly holdMs: number | null } | null;
  readonly scrape: readonly SeriesSelector[] | null;
}

/** A selector the spec validation already accepted. */
function selectorOf(text: string): SeriesSelector {
  const parsed = parseSeriesSelector(text);
  if (!parsed.ok) throw new Error(`series ${text}: ${parsed.error.detail}`);
  return parsed.selector;
}

/** The seed records a spec with `data` reads, and the shard reading them. */
export interface StepData {
  readonly records: readonly SeedRecord[];
  readonly shard: { readonly index: number; readonly count: number };
}

export function customStepsFlow(spec: RunSpec, data: StepData | null = null): Flow {
  const picker = spec.data && data ? recordPicker(spec.data, data.records.length, data.shard, spec.vus !== null) : null;
  const cycle = interleaveCycle(spec.steps.map((s) => s.weight));
  const steps = compileSteps(spec);
  return {
    async run(io, it: IterationInfo) {
      const captured = it.captured ?? new Map<string, string>();
      // No record left (unique selection used them all): the iteration sends nothing and
      // counts as dropped.
      const recordIndex = picker ? picker.pick(it) : null;
      if (picker && recordIndex === null) return;
      const record = recordIndex === null ? undefined : data!.records[recordIndex];
      const ctx: TemplateContext = { iteration: it.global, shard: it.shard, region: it.region, vu: it.vu ?? 0, captured, ...(record ? { data: record } : {}) };
      if (spec.flow !== "sequence") {
        const index = cycle[it.global % cycle.length]!;
        await runStep(io, index, steps[index]!, ctx, captured);
        return;
      }
      for (let i = 0; i < steps.length; i++) {
        if (!(await runStep(io, i, steps[i]!, ctx, captured))) return;
      }
    },
    ...(picker ? { snapshot: () => picker.snapshot(), restore: (saved: unknown) => picker.restore(typeof saved === "number" ? saved : 0) } : {}),
  };
}

/** The spec's steps, each compiled once: its templates, expected statuses, checks, captures and records. */
function compileSteps(spec: RunSpec): CompiledStep[] {
  const capturedBefore = new Set<string>();
  return spec.steps.map((s) => {
    // The spec validation guarantees every `{{captured.X}}` names an earlier capture.
    const scope = { vars: spec.vars, secrets: spec.secrets, captured: new Set(capturedBefore), setup: spec.setupData ?? {}, data: Boolean(spec.data) };
    const capture = s.capture ?? {};
    for (const name of Object.keys(capture)) capturedBefore.add(name);
    return {
      url: compileTemplate(spec.target + s.path, scope),
      method: s.method,
      headers: Object.entries(s.headers).map(([k, v]) => [k, compileTemplate(v, scope)] as const),
      constantHeaders: Object.values(s.headers).every((v) => !v.includes("{{")) ? { ...s.headers } : null,
      body: s.body === null ? null : compileTemplate(s.body, scope),
      expect: s.expectedStatuses ? new Set(s.expectedStatuses) : null,
      checks: s.checks.map((c) => ({
        ...(c.status ? { status: new Set(c.status) } : {}),
        ...(c.bodyIncludes !== undefined ? { bodyIncludes: c.bodyIncludes } : {}),
      })),
      captures: Object.entries(capture).map(([name, source]) => [name, compileCapture(source)] as const),
      record: Object.entries(s.record ?? {}),
      think: s.think ?? null,
      readBody: s.checks.some((c) => c.bodyIncludes !== undefined) || Object.values(capture).some(readsBody) || Boolean(s.scrape),
      stream: s.sse ?? null,
      scrape: s.scrape ? s.scrape.series.map(selectorOf) : null,
    };
  });
}

/** Runs step `index` (request, checks, captures, records, think time); false when a capture failed and the iteration must end. */
async function runStep(io: FlowIO, index: number, step: CompiledStep, ctx: TemplateContext, captured: Map<string, string>): Promise<boolean> {
  const r = await io.send(index, {
    url: step.url(ctx),
    method: step.method,
    headers: step.constantHeaders ?? Object.fromEntries(step.headers.map(([k, v]) => [k, v(ctx)])),
    ...(step.body ? { body: step.body(ctx) } : {}),
    expect: step.expect,
    readBody: step.readBody,
    ...(step.stream ? { stream: step.stream } : {}),
  });
  const allPassed = checkResponse(io, step, r);
  const capturedAll = captureInto(captured, step, r);
  if (!capturedAll) io.check(false);
  recordInto(io, step, r, allPassed && capturedAll);
  if (step.think) {
    const { minMs, maxMs } = step.think;
    await io.sleep(minMs + Math.random() * (maxMs - minMs));
  }
  return capturedAll;
}

/** Counts the step's checks (and a scrape's) on the response; true when the status was expected and every check passed. */
function checkResponse(io: FlowIO, step: CompiledStep, r: FlowResponse): boolean {
  let allPassed = r.error === null && isExpectedStatus(r.status, step.expect);
  // As in k6, a check on a request that got no response fails.
  for (const check of step.checks) {
    const passed =
      r.error === null && (!check.status || check.status.has(r.status)) && (check.bodyIncludes === undefined || (r.body ?? "").includes(check.bodyIncludes));
    io.check(passed);
    allPassed &&= passed;
  }
  if (step.scrape && r.error === null && r.status >= 200 && r.status < 300) {
    // A scrape that does not parse, or misses a chosen series, fails its check.
    const parsed = parsePrometheusText(r.body ?? "");
    const samples = parsed.ok ? step.scrape.map((selector) => selectSamples(parsed.samples, selector)) : [];
    io.sample(samples.flat().map((s) => ({ name: s.name, labels: s.labels, value: s.value })));
    const complete = parsed.ok && samples.every((found) => found.length > 0);
    io.check(complete);
    allPassed &&= complete;
  }
  return allPassed;
}

/** Sets each of the step's captures from the response (a missing one is removed); false when any found nothing. */
function captureInto(captured: Map<string, string>, step: CompiledStep, r: FlowResponse): boolean {
  let capturedAll = true;
  for (const [name, extract] of step.captures) {
    const value = r.error === null ? extract(r.headers, r.body) : undefined;
    if (value === undefined) {
      capturedAll = false;
      captured.delete(name);
    } else {
      captured.set(name, value);
    }
  }
  return capturedAll;
}

/** Records the step into its declared custom metrics; `succeeded`: expected status, checks and captures all good. */
function recordInto(io: FlowIO, step: CompiledStep, r: FlowResponse, succeeded: boolean): void {
  for (const [metric, what] of step.record) {
    if (what === "duration") {
      if (r.error === null) io.trend(metric, r.durationMs);
    } else if (what === "success") {
      io.rate(metric, succeeded);
    } else {
      io.count(metric);
    }
  }
}
