/**
 * The built-in scenarios as a run spec sees them: each one's name, the seed kind it reads,
 * the options it needs, its steps (the step tags of its metrics) and the custom metrics it
 * records (so thresholds can name them and summaries show them even at zero). Spec parsing
 * checks a `scenario` section against these; the flows that send the requests are in
 * scenarios/ (scenarios/catalog.ts pairs each outline here with its flow).
 */
import { TOKEN_TYPES, TYPE_RATE_METRIC, type SeedKind } from "../data/seed-set.ts";

export type CustomMetricKind = "counter" | "rate" | "trend";

export interface ScenarioOptions {
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** The provider's ADMIN_API_SECRET (the mail-OTP login asks the admin API for codes). */
  readonly adminSecret?: string;
  readonly redirectUri?: string;
  readonly scope: string;
  /** Token exchange: the `audience` parameter, when the provider wants one. */
  readonly audience?: string;
}

/** An option a scenario cannot run without. */
export type ScenarioNeed = "clientId" | "clientSecret" | "adminSecret" | "redirectUri";

export interface StepOutline {
  readonly name: string;
  readonly method: string;
  readonly path: string;
}

/** What a built-in scenario is, short of its flow. */
export interface ScenarioOutline {
  readonly name: string;
  readonly description: string;
  readonly seedKind: SeedKind | null;
  readonly needs: ReadonlyArray<ScenarioNeed>;
  readonly steps: readonly StepOutline[];
  readonly metrics: Readonly<Record<string, CustomMetricKind>>;
}

/** Metric name prefix of a scenario: `token-exchange` → `token_exchange`. */
export const metricPrefix = (scenario: string) => scenario.replace(/-/g, "_");

/** The duration trend and success rate every scenario keeps, named as in Authrim's suite. */
export function flowMetrics(scenario: string): Record<string, CustomMetricKind> {
  const p = metricPrefix(scenario);
  return { [`${p}_duration`]: "trend", [`${p}_success`]: "rate" };
}

/** The built-in scenarios, by the name a run spec or `edgeload run --scenario` uses. */
export const SCENARIO_OUTLINES = {
  userinfo: {
    name: "userinfo",
    description: "GET /userinfo with a valid bearer token; 200 JSON with sub",
    seedKind: "access-tokens",
    needs: [],
    steps: [{ name: "userinfo", method: "GET", path: "/userinfo" }],
    metrics: flowMetrics("userinfo"),
  },
  introspect: {
    name: "introspect",
    description: "POST /introspect (RFC 7662, Basic client auth) over the whole token mix; `active` checked per type",
    seedKind: "access-tokens",
    needs: ["clientId", "clientSecret"],
    steps: [{ name: "introspect", method: "POST", path: "/introspect" }],
    metrics: {
      ...flowMetrics("introspect"),
      active_correct: "rate",
      claims_correct: "rate",
      false_positives: "counter",
      false_negatives: "counter",
      ...Object.fromEntries(TOKEN_TYPES.map((t) => [TYPE_RATE_METRIC[t], "rate" as const])),
    },
  },
  "token-exchange": {
    name: "token-exchange",
    description: "POST /token RFC 8693 with valid, expired and revoked subject tokens; invalid or revoked subjects must be refused",
    seedKind: "access-tokens",
    needs: ["clientId", "clientSecret"],
    steps: [{ name: "token_exchange", method: "POST", path: "/token" }],
    metrics: {
      ...flowMetrics("token-exchange"),
      invalid_token_accepted: "counter",
      revoked_token_accepted: "counter",
      valid_token_rejected: "counter",
      revoked_reason_reported: "rate",
    },
  },
  refresh: {
    name: "refresh",
    description: "POST /token grant_type=refresh_token; each shard rotates its own token families",
    seedKind: "refresh-tokens",
    needs: [],
    steps: [{ name: "refresh", method: "POST", path: "/token" }],
    metrics: { ...flowMetrics("refresh"), rotation_success: "rate", families_busy: "counter", families_lost: "counter" },
  },
  "silent-auth": {
    name: "silent-auth",
    description: "GET /authorize?prompt=none with an authrim_session cookie; 302 with code and matching state",
    seedKind: "sessions",
    needs: ["clientId", "redirectUri"],
    steps: [{ name: "authorize", method: "GET", path: "/authorize" }],
    metrics: { ...flowMetrics("silent-auth"), login_required: "counter", consent_required: "counter" },
  },
  "otp-login": {
    name: "otp-login",
    description: "the 5-step mail-OTP login as Authrim v0.1.15 answers it: authorize → email code → verify → authorize prompt=none → token",
    seedKind: "users",
    needs: ["clientId", "clientSecret", "adminSecret", "redirectUri"],
    steps: [
      { name: "authorize", method: "GET", path: "/authorize" },
      { name: "email_code", method: "POST", path: "/api/admin/test/email-codes" },
      { name: "verify", method: "POST", path: "/api/auth/email-codes/verify" },
      { name: "authorize_silent", method: "GET", path: "/authorize" },
      { name: "token", method: "POST", path: "/token" },
    ],
    metrics: { ...flowMetrics("otp-login"), otp_login_failed_step: "counter" },
  },
} as const satisfies Record<string, ScenarioOutline>;

export type ScenarioName = keyof typeof SCENARIO_OUTLINES;

/** Each outline by name, typed as an outline (for lookups by a name from input). */
export const SCENARIO_BY_NAME: Readonly<Record<string, ScenarioOutline>> = SCENARIO_OUTLINES;

export const SCENARIO_NAMES = Object.keys(SCENARIO_OUTLINES) as ScenarioName[];
