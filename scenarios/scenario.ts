/**
 * What a built-in scenario is: its steps (the step tags of its metrics), the seed kind it
 * reads, the options it needs, the custom metrics it records (so thresholds can name
 * them and summaries show them even at zero), and a factory for its flow.
 */
import type { SeedData, SeedKind } from "../core/seed-set.ts";
import { base64url } from "../core/web-crypto.ts";
import type { Flow } from "./flow.ts";

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

export interface StepOutline {
  readonly name: string;
  readonly method: string;
  readonly path: string;
}

export interface ScenarioContext {
  /** Base URL without a trailing slash. */
  readonly target: string;
  readonly options: ScenarioOptions;
  readonly data: SeedData | null;
  readonly shardIndex: number;
  readonly shardCount: number;
}

export interface ScenarioDefinition {
  readonly name: string;
  readonly description: string;
  readonly seedKind: SeedKind | null;
  readonly needs: ReadonlyArray<"clientId" | "clientSecret" | "adminSecret" | "redirectUri">;
  readonly steps: readonly StepOutline[];
  readonly metrics: Readonly<Record<string, CustomMetricKind>>;
  create(ctx: ScenarioContext): Flow;
}

/** Metric name prefix of a scenario: `token-exchange` → `token_exchange`. */
export const metricPrefix = (scenario: string) => scenario.replace(/-/g, "_");

/** The duration trend and success rate every scenario keeps, named as in Authrim's suite. */
export function flowMetrics(scenario: string): Record<string, CustomMetricKind> {
  const p = metricPrefix(scenario);
  return { [`${p}_duration`]: "trend", [`${p}_success`]: "rate" };
}

export { shuffled } from "../core/shuffle.ts";

/** Seed entries of the kind a scenario reads; a clear error otherwise. */
export function seedEntries<K extends SeedData["kind"]>(ctx: ScenarioContext, kind: K): Extract<SeedData, { kind: K }>["entries"] {
  if (!ctx.data || ctx.data.kind !== kind) throw new Error(`this scenario reads a ${kind} seed set, got ${ctx.data?.kind ?? "none"}`);
  return ctx.data.entries as never;
}

/** An option the spec validation guarantees for this scenario. */
export function required(options: ScenarioOptions, name: "clientId" | "clientSecret" | "adminSecret" | "redirectUri"): string {
  const v = options[name];
  if (!v) throw new Error(`scenario option ${name} is required`);
  return v;
}

/** Random URL-safe text for state, nonce and PKCE verifiers. */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}
