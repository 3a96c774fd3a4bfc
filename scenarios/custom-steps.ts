/**
 * The flow of a spec without a built-in scenario: its own steps, one request per
 * iteration, the step chosen by weight (smooth weighted round-robin over the run-wide
 * iteration index), with `{{…}}` templates compiled once and k6-style checks.
 */
import { interleaveCycle } from "../core/interleave.ts";
import type { RunSpec } from "../core/run-spec.ts";
import { compileTemplate, type Template, type TemplateContext } from "../core/template.ts";
import type { Flow } from "./flow.ts";

interface CompiledStep {
  readonly url: Template;
  readonly method: string;
  readonly headers: ReadonlyArray<readonly [string, Template]>;
  readonly constantHeaders: Record<string, string> | null;
  readonly body: Template | null;
  readonly expect: ReadonlySet<number> | null;
  readonly checks: ReadonlyArray<{ status?: ReadonlySet<number>; bodyIncludes?: string }>;
  readonly readBody: boolean;
}

export function customStepsFlow(spec: RunSpec): Flow {
  const scope = { vars: spec.vars, secrets: spec.secrets };
  const cycle = interleaveCycle(spec.steps.map((s) => s.weight));
  const steps: CompiledStep[] = spec.steps.map((s) => ({
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
    readBody: s.checks.some((c) => c.bodyIncludes !== undefined),
  }));
  return {
    async run(io, it) {
      const index = cycle[it.global % cycle.length]!;
      const step = steps[index]!;
      const ctx: TemplateContext = { iteration: it.global, shard: it.shard, region: it.region };
      const r = await io.send(index, {
        url: step.url(ctx),
        method: step.method,
        headers: step.constantHeaders ?? Object.fromEntries(step.headers.map(([k, v]) => [k, v(ctx)])),
        ...(step.body ? { body: step.body(ctx) } : {}),
        expect: step.expect,
        readBody: step.readBody,
      });
      // As in k6, a check on a request that got no response fails.
      for (const check of step.checks) {
        io.check(r.error === null && (!check.status || check.status.has(r.status)) && (check.bodyIncludes === undefined || (r.body ?? "").includes(check.bodyIncludes)));
      }
    },
  };
}
