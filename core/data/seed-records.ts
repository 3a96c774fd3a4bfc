/**
 * Seed records in a run's own steps: `"data": {"seed": "users-1k", "select": "unique"}`
 * makes each iteration take one record of the seed set, whose fields its templates read as
 * `{{data.email}}`, `{{data.userId}}`, … (the fields of the set's kind, RECORD_FIELDS).
 *
 * Selection, like k6's SharedArray patterns:
 * - `per-vu` (default): VU n uses record n (wrapping past the end); arrival-rate runs, which
 *   have no VUs, go through the records in iteration order. VUs are numbered run-wide, so
 *   two shards never share a record while there are at least as many records as VUs.
 * - `unique`: every record at most once in the whole run. Arrival-rate iterations take the
 *   record of their run-wide index; a closed-model shard takes its own contiguous segment of
 *   the records (its k6 execution segment, i/n … (i+1)/n), so shards never overlap. Once
 *   the records are used up, iterations are dropped (counted, not sent).
 * - `uniform`: any record, uniformly at random, each iteration.
 * - `zipf`: record k (in set order) with probability ∝ 1/k^exponent: the first records are
 *   the hot ones (core/data/zipf.ts).
 */
import type { Problem } from "../spec/input-problem.ts";
import type { DataSpec } from "../spec/data-schema.ts";
import type { StepSpec } from "../spec/types.ts";
import type { SeedData, SeedKind } from "./seed-set.ts";
import { dataFields } from "../spec/template.ts";
import { MAX_ZIPF_KEYS, zipfSampler } from "./zipf.ts";

export type { DataSpec } from "../spec/data-schema.ts";

/** The fields `{{data.FIELD}}` may name, by seed kind. */
export const RECORD_FIELDS: Readonly<Record<SeedKind, readonly string[]>> = {
  "access-tokens": ["access_token", "type", "user_id", "jti"],
  users: ["email", "userId"],
  "refresh-tokens": ["token", "user_id", "client_id", "client_secret", "jti"],
  sessions: ["session_id", "user_id"],
  "auth-codes": ["code", "code_verifier", "redirect_uri", "state", "nonce", "user_id"],
};

export type SeedRecord = Readonly<Record<string, string>>;

/** The first `{{data.FIELD}}` of the steps that records of `kind` do not have, as a problem. */
export function unknownDataField(steps: readonly StepSpec[], seed: string, kind: SeedKind): Problem | null {
  const known = RECORD_FIELDS[kind];
  for (const [i, step] of steps.entries()) {
    const unknown = [step.path, step.body ?? "", ...Object.values(step.headers)].flatMap(dataFields).find((f) => !known.includes(f));
    if (unknown) return { field: `steps.${i}`, detail: `{{data.${unknown}}}: seed set ${seed} holds ${kind}, whose records have ${known.join(", ")}` };
  }
  return null;
}

/** A seed set's entries as flat records of strings (fields a template can insert). */
export function seedRecords(data: SeedData): SeedRecord[] {
  const fields = RECORD_FIELDS[data.kind];
  return (data.entries as ReadonlyArray<Record<string, unknown>>).map((entry) => {
    const record: Record<string, string> = {};
    for (const field of fields) {
      const value = entry[field];
      if (value !== undefined && value !== null) record[field] = String(value);
    }
    return record;
  });
}

/** What picks one record for an iteration: its index, or null when none is left. */
export interface RecordPicker {
  pick(it: { readonly global: number; readonly vu?: number }): number | null;
  /** Where a unique closed-model shard is in its segment (checkpointed with the flow). */
  snapshot(): number;
  restore(next: number): void;
}

/** The picker of one shard (`index` of `count`) over `total` records. */
export function recordPicker(
  spec: DataSpec,
  total: number,
  shard: { readonly index: number; readonly count: number },
  closedModel: boolean,
  random: () => number = Math.random,
): RecordPicker {
  let next = 0;
  const stateless = (pick: RecordPicker["pick"]): RecordPicker => ({ pick, snapshot: () => 0, restore: () => {} });
  if (total === 0) return stateless(() => null);
  switch (spec.select) {
    case "per-vu":
      return stateless((it) => (closedModel && it.vu !== undefined ? (it.vu - 1) % total : it.global % total));
    case "uniform":
      return stateless(() => Math.min(total - 1, Math.floor(random() * total)));
    case "zipf": {
      const draw = zipfSampler(Math.min(total, MAX_ZIPF_KEYS), spec.exponent);
      return stateless(() => draw(random()) - 1);
    }
    case "unique": {
      if (!closedModel) return stateless((it) => (it.global < total ? it.global : null));
      const from = Math.floor((shard.index * total) / shard.count);
      const to = Math.floor(((shard.index + 1) * total) / shard.count);
      return {
        pick: () => (from + next < to ? from + next++ : null),
        snapshot: () => next,
        restore: (saved) => (next = saved),
      };
    }
  }
}
