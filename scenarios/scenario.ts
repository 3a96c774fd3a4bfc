/**
 * What a built-in scenario is: its outline (core/spec/builtin-scenarios.ts: steps, the seed kind
 * it reads, the options it needs, the custom metrics it records) and a factory for its flow,
 * with the helpers the flows share.
 */
import type { ScenarioNeed, ScenarioOptions, ScenarioOutline } from "../core/spec/builtin-scenarios.ts";
import type { SeedData } from "../core/data/seed-set.ts";
import { base64url } from "../core/data/web-crypto.ts";
import type { Flow } from "./flow.ts";

export interface ScenarioContext {
  /** Base URL without a trailing slash. */
  readonly target: string;
  readonly options: ScenarioOptions;
  readonly data: SeedData | null;
  readonly shardIndex: number;
  readonly shardCount: number;
}

export interface ScenarioDefinition extends ScenarioOutline {
  create(ctx: ScenarioContext): Flow;
}

export { shuffled } from "../core/data/shuffle.ts";

/** Seed entries of the kind a scenario reads; a clear error otherwise. */
export function seedEntries<K extends SeedData["kind"]>(ctx: ScenarioContext, kind: K): Extract<SeedData, { kind: K }>["entries"] {
  if (!ctx.data || ctx.data.kind !== kind) throw new Error(`this scenario reads a ${kind} seed set, got ${ctx.data?.kind ?? "none"}`);
  return ctx.data.entries as never;
}

/** An option the spec validation guarantees for this scenario. */
export function required(options: ScenarioOptions, name: ScenarioNeed): string {
  const v = options[name];
  if (!v) throw new Error(`scenario option ${name} is required`);
  return v;
}

/** Random URL-safe text for state, nonce and PKCE verifiers. */
export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}
