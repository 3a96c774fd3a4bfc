/**
 * The spec as it may be stored or shown. Secrets live only in the run's Durable Object
 * while it runs; everything written to D1, returned by the API or put in a summary goes
 * through `redactSpec` first.
 *
 * Two passes. The first hides by place: `secrets`, what setup captured, every `__ENV` value
 * but those marked public (`script.publicEnv`), header values but harmless ones, credential
 * fields of bodies, URL credentials (redact-url.ts, redact-fields.ts). The second hides by
 * value: each value the first pass hid (6 characters or more, so common words survive) is
 * searched for in every other string of the spec, so a token copied into a path, a body or
 * the run's name is caught too (redact-values.ts).
 */
import type { RunSpec, StepSpec } from "./types.ts";
import { redactBody, redactEnv, redactHeaders } from "./redact-fields.ts";
import { REDACTED, redactUrl, SECRET_NAME, urlCredentials } from "./redact-url.ts";
import { hideValues, valueHider, type ValueHider } from "./redact-values.ts";

export { REDACTED, redactUrl, redactUrlsIn } from "./redact-url.ts";
export { hideIn, hideInSummary, type ValueHider } from "./redact-values.ts";

/**
 * The spec with its secrets and credentials replaced by "[redacted]", by place and then by
 * value; every named scenario's spec likewise. Step names, thresholds, metrics and the
 * executor's options are left as they are: summaries are built from the redacted spec.
 */
export function redactSpec(spec: RunSpec): RunSpec {
  return redactRun(spec).shown;
}

/** `redactSpec` and `secretHider` of one spec at once, for a view that shows both (the run's status). */
export function redactRun(spec: RunSpec): { readonly shown: RunSpec; readonly hider: ValueHider } {
  const hidden: string[] = [];
  const placed = redactByPlace(spec, hidden);
  const hider = valueHider(hidden, placed.target);
  return { shown: hideValues(placed, hider), hider };
}

/**
 * What hides this run's secrets in anything else shown about it — its summary, error
 * messages, a script's console lines: the values `redactSpec` hides (redact-values.ts
 * `valueHider`), with URL credentials and JWTs. Built from the spec as given, before any
 * redaction; of an already redacted spec it still hides URL credentials and JWTs.
 *
 * @example hideIn(summary, secretHider(run.spec))
 */
export function secretHider(spec: RunSpec): ValueHider {
  const hidden: string[] = [];
  return valueHider(hidden, redactByPlace(spec, hidden).target);
}

function redactByPlace(spec: RunSpec, hidden: string[]): RunSpec {
  const options = spec.scenario?.options;
  const steps = (list: readonly StepSpec[]) => list.map((s) => redactStep(s, hidden));
  const keyed = (values: Readonly<Record<string, string>>) => {
    hidden.push(...Object.values(values));
    return Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]));
  };
  hidden.push(...urlCredentials(spec.target));
  if (options?.clientSecret) hidden.push(options.clientSecret);
  if (options?.adminSecret) hidden.push(options.adminSecret);
  return {
    ...spec,
    target: redactUrl(spec.target),
    secrets: keyed(spec.secrets),
    // What setup captured is often a token.
    ...(spec.setupData ? { setupData: keyed(spec.setupData) } : {}),
    ...(spec.setup ? { setup: steps(spec.setup) } : {}),
    ...(spec.teardown ? { teardown: steps(spec.teardown) } : {}),
    ...(spec.scenarios ? { scenarios: spec.scenarios.map((s) => ({ ...s, spec: redactByPlace(s.spec, hidden) })) } : {}),
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
    steps: steps(spec.steps),
    // A spec's vars are its shown values (`secrets` are its secret ones); a var whose name
    // says credential is hidden all the same, as `-e API_KEY=…` on a spec lands here.
    vars: Object.fromEntries(
      Object.entries(spec.vars).map(([k, v]) => {
        hidden.push(...(SECRET_NAME.test(k) ? [v] : urlCredentials(v)));
        return [k, SECRET_NAME.test(k) ? REDACTED : redactUrl(v)];
      }),
    ),
    ...(spec.script ? { script: { ...spec.script, env: redactEnv(spec.script.env, spec.script.publicEnv ?? [], hidden) } } : {}),
    // Push endpoints' headers carry their credentials (API keys, bearer tokens): all hidden.
    ...(spec.outputs?.length
      ? {
          outputs: spec.outputs.map((o) => {
            hidden.push(...urlCredentials(o.url));
            return { ...o, url: redactUrl(o.url), headers: keyed(o.headers) };
          }),
        }
      : {}),
  };
}

function redactStep(step: StepSpec, hidden: string[]): StepSpec {
  hidden.push(...urlCredentials(step.path));
  return { ...step, path: redactUrl(step.path), headers: redactHeaders(step.headers, hidden), body: redactBody(step.body, hidden) };
}
