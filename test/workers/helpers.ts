// Shared helpers for the workers tests: authenticated calls to the coordinator Worker.
import { env, exports } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";

export const TOKEN = "test-token-of-at-least-32-characters";
/** EDGELOAD_READ_TOKEN of the workers tests (vitest.config.ts). */
export const READ_TOKEN = "read-token-of-at-least-32-characters";

export function api(path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const { token = TOKEN, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  if (rest.body !== undefined) headers.set("content-type", "application/json");
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(`http://edgeload.test${path}`, { ...rest, headers }));
}

/** A small valid spec against the real local target. */
export function spec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "workers test",
    target: env.TARGET_URL,
    steps: [{ path: "/delay?ms=5", checks: [{ status: 200 }] }],
    executor: "constant-arrival-rate",
    rate: 40,
    duration: "2s",
    shards: 2,
    regions: ["wnam", "weur"],
    timeout: "2s",
    ...overrides,
  };
}

export async function createRun(overrides: Record<string, unknown> = {}): Promise<{ id: string; startsAt: string }> {
  const response = await api("/v1/runs", { method: "POST", body: JSON.stringify(spec(overrides)) });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return response.json();
}

export async function waitForStatus(
  id: string,
  final = ["passed", "failed", "inconclusive", "aborted", "error"],
  timeoutMs = 30_000,
): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = (await (await api(`/v1/runs/${id}`)).json()) as Record<string, any>;
    if (final.includes(view.status)) return view;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${view.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Makes a shard look as if it was running and died: its state says running (no planned
 * handover) and its alarm is re-delivered at `atMs`, as the runtime does after a crash.
 */
export async function simulateShardCrash(shard: DurableObjectStub, atMs: number): Promise<void> {
  await runInDurableObject(shard, async (_instance, state) => {
    const saved = state.storage.kv.get<Record<string, unknown>>("state")!;
    state.storage.kv.put("state", { ...saved, phase: "running", cursor: 0, handoff: false });
    await state.storage.setAlarm(atMs);
  });
  // A crash ends the instance: the next one knows only what storage holds.
  await evictDurableObject(shard);
}

/** The run's objects by their Durable Object names: its coordinator, shard `i` (`<run>/<i>`). */
export const coordinatorOf = (runId: string) => env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));
export const shardOf = (runId: string, i: number) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`${runId}/${i}`));

/** What an object's storage holds: its keys, its own tables (not workerd's), its alarm, the database's size. */
export async function storageOf(stub: DurableObjectStub): Promise<{ keys: string[]; tables: string[]; alarm: number | null; bytes: number }> {
  return runInDurableObject(stub, async (_instance, state) => ({
    keys: [...state.storage.kv.list()].map(([key]) => key),
    tables: state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
      )
      .toArray()
      .map((r) => r.name),
    alarm: await state.storage.getAlarm(),
    bytes: state.storage.sql.databaseSize,
  }));
}
