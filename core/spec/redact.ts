/**
 * The spec as it may be stored or shown. Secrets live only in the run's Durable Object
 * while it runs; everything written to D1, returned by the API or put in a summary goes
 * through `redactSpec` first.
 */
import { usesSecrets } from "./template.ts";
import type { RunSpec, StepSpec } from "./types.ts";
import { SECRET_ENV } from "./script-schema.ts";

const SECRET_HEADERS = /^(authorization|cookie|proxy-authorization|x-api-key|x-auth-token)$/i;
export const REDACTED = "[redacted]";

/**
 * Secrets removed, and header values or bodies that carry credentials (auth headers,
 * `{{secrets.…}}` templates) replaced by "[redacted]"; likewise the values setup captured
 * (often a token) and every named scenario's spec.
 */
export function redactSpec(spec: RunSpec): RunSpec {
  const options = spec.scenario?.options;
  const redactSteps = (steps: readonly StepSpec[]) =>
    steps.map((s) => ({
      ...s,
      headers: Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, SECRET_HEADERS.test(k) || usesSecrets(v) ? REDACTED : v])),
      body: s.body !== null && usesSecrets(s.body) ? REDACTED : s.body,
    }));
  return {
    ...spec,
    secrets: Object.fromEntries(Object.keys(spec.secrets).map((k) => [k, REDACTED])),
    ...(spec.setupData ? { setupData: Object.fromEntries(Object.keys(spec.setupData).map((k) => [k, REDACTED])) } : {}),
    ...(spec.setup ? { setup: redactSteps(spec.setup) } : {}),
    ...(spec.teardown ? { teardown: redactSteps(spec.teardown) } : {}),
    ...(spec.scenarios ? { scenarios: spec.scenarios.map((s) => ({ ...s, spec: redactSpec(s.spec) })) } : {}),
    scenario:
      spec.scenario && options
        ? {
            ...spec.scenario,
            options: {
              ...options,
              ...(options.clientSecret ? { clientSecret: REDACTED } : {}),
              ...(options.adminSecret ? { adminSecret: REDACTED } : {}),
            },
          }
        : spec.scenario,
    steps: redactSteps(spec.steps),
    // A script's __ENV often carries a token: values of secret-looking names are hidden.
    ...(spec.script
      ? { script: { ...spec.script, env: Object.fromEntries(Object.entries(spec.script.env).map(([k, v]) => [k, SECRET_ENV.test(k) ? REDACTED : v])) } }
      : {}),
    // Push endpoints' headers carry their credentials (API keys, bearer tokens).
    ...(spec.outputs?.length
      ? { outputs: spec.outputs.map((o) => ({ ...o, headers: Object.fromEntries(Object.keys(o.headers).map((k) => [k, REDACTED])) })) }
      : {}),
  };
}
