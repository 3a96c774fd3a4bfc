/**
 * ScheduleVault: one Durable Object per schedule, holding what its turns need and nobody may
 * read — the run spec as given (its `secrets`, a scenario's client secret, a script's
 * __ENV) and the webhooks' HMAC secrets. Secrets live only in Durable Object storage, never
 * in D1 (DESIGN: "secrets … never stored or reported"), as a run's full spec lives only in
 * its RunCoordinator; D1's `schedules` row keeps the spec redacted and the webhooks without
 * their secrets, for showing. Thin: put, get, forget.
 */
import { DurableObject } from "cloudflare:workers";
import type { Webhook } from "../../core/watch/schedule-input.ts";

/** What a schedule's turns need: the spec to admit (as given, JSON) and the webhooks to sign for. */
export interface ScheduleSecrets {
  readonly specJson: string;
  readonly webhooks: readonly Webhook[];
}

const KEY = "schedule";

export class ScheduleVault extends DurableObject {
  async put(secrets: ScheduleSecrets): Promise<void> {
    this.ctx.storage.kv.put(KEY, secrets);
  }

  async get(): Promise<ScheduleSecrets | null> {
    return this.ctx.storage.kv.get<ScheduleSecrets>(KEY) ?? null;
  }

  async forget(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

/** The vault of schedule `id`. */
export function vaultOf(env: { readonly SCHEDULE_VAULT: DurableObjectNamespace }, id: string): DurableObjectStub<ScheduleVault> {
  const ns = env.SCHEDULE_VAULT as unknown as DurableObjectNamespace<ScheduleVault>;
  return ns.get(ns.idFromName(id));
}
