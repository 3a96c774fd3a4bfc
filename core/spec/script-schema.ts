/**
 * `script`: the run's iterations are a k6 script's function (k6-compat/), not steps or a
 * built-in scenario. The script itself is uploaded before the run (`PUT /v1/scripts/:id`,
 * content-addressed by SHA-256) and named here; the run spec only says which of its
 * exported functions to run and with which `__ENV`.
 */
import { z } from "zod";
import { duration } from "./fields.ts";

/** k6's default setupTimeout and teardownTimeout. */
export const SCRIPT_PHASE_TIMEOUT_MS = 60_000;

/**
 * k6's request timeout (js/modules/k6/http/request.go): a script's requests without
 * `params.timeout` wait this long, unless the spec's `timeout` (edgeload's --timeout) says.
 */
export const SCRIPT_REQUEST_TIMEOUT_MS = 60_000;

export const SCRIPT_ID = /^[0-9a-f]{64}$/;

export const scriptSchema = z
  .object({
    bundle: z.string().regex(SCRIPT_ID, "the SHA-256 (hex) of a bundle uploaded with PUT /v1/scripts/:sha256"),
    exec: z
      .string()
      .regex(/^[A-Za-z_$][\w$]{0,63}$/, "the name of a function the script exports")
      .default("default"),
    env: z.record(z.string(), z.string()).default({}),
    /**
     * `__ENV` names whose values may be stored and shown (`--public-env NAME`); every other
     * value is redacted wherever the spec is stored or shown (redact.ts), whatever its name.
     */
    publicEnv: z.array(z.string().min(1, "an __ENV name")).max(100, "at most 100 names").default([]),
    setup: z.boolean().default(false),
    teardown: z.boolean().default(false),
    /** How long setup() and teardown() may run (k6's options of the same names); past it the run ends in error, k6's 100 and 101. */
    setupTimeout: duration("setupTimeout").default(SCRIPT_PHASE_TIMEOUT_MS),
    teardownTimeout: duration("teardownTimeout").default(SCRIPT_PHASE_TIMEOUT_MS),
    /**
     * k6's minIterationDuration (ms): a VU whose iteration was shorter waits out the rest before
     * its next (workers/shard/iteration-io.ts). Absent: no wait.
     */
    minIterationDuration: duration("minIterationDuration").optional(),
    /**
     * The scenario drives a browser (k6's `options.browser.type: "chromium"`, set from the
     * script's options): the planner prices its Browser Run sessions and spreads their starts
     * (core/plan/browser-plan.ts). Absent: no browser is planned or priced.
     */
    browser: z.boolean().optional(),
  })
  .strict();

export type ScriptSpec = z.output<typeof scriptSchema>;

/** Where an uploaded bundle is kept in R2. */
export const scriptObjectKey = (id: string) => `scripts/${id}.json`;

/**
 * The step of a script's requests tagged with a `step` (or `name`) that no step of the run
 * has: a threshold names the steps that get their own (k6-compat/options.ts), and these are
 * kept apart from the function's untagged requests rather than counted as its.
 */
export const OTHER_TAGS_STEP = "_other-tags";

/**
 * The step (index into `steps`) a script's request with this `step`/`name` tag is recorded
 * under: an untagged one is the function's own (the first), a tagged one its step, else
 * OTHER_TAGS_STEP. A run without that step (a spec not made from a script's options)
 * refuses the request, as an error in the iteration, rather than count it as the
 * function's. setup() and teardown() have no steps: 0.
 */
export function scriptStepOf(tag: string | undefined, steps: readonly string[]): number {
  if (tag === undefined || steps.length === 0) return 0;
  const named = steps.indexOf(tag);
  if (named >= 0) return named;
  const other = steps.indexOf(OTHER_TAGS_STEP);
  if (other >= 0) return other;
  throw new Error(`request tagged step "${tag}": the run has no step of that name and none for other tags (its steps: ${steps.join(", ")})`);
}

/** The key of `setupData` under which a script's setup() result (JSON) reaches the shards. */
export const SETUP_DATA = "k6";

/** Whether a run runs a k6 script (itself, or in one of its named scenarios). */
export function isScriptRun(spec: {
  readonly script?: unknown;
  readonly scenarios?: ReadonlyArray<{ readonly spec: { readonly script?: unknown } }>;
}): boolean {
  return Boolean(spec.script) || (spec.scenarios ?? []).some((s) => Boolean(s.spec.script));
}
