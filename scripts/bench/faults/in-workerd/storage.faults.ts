/**
 * Fault rows inside workerd, the run's storage: D1 refusing writes for a while and past the
 * retry budget, the seed set missing from R2 when a shard first loads it. The runs and
 * their accounting: ./fault-rows.ts.
 */
import { env } from "cloudflare:workers";
import { describe, it } from "vitest";
import { seedObjectKey } from "../../../../core/data/seed-set.ts";
import { api } from "../../../../test/workers/helpers.ts";
import { type Fault, faultRows, until } from "./fault-rows.ts";

const renameWindows = (from: string, to: string) => env.DB.exec(`ALTER TABLE ${from} RENAME TO ${to}`);

const SEED = "fault-users";

const faults: Fault[] = [
  {
    name: "D1 refusing writes for 5 s",
    outcome: "passed",
    async during({ t0 }) {
      await until(t0 + 1_000);
      await renameWindows("windows", "windows_away");
      await until(t0 + 6_000);
      await renameWindows("windows_away", "windows");
    },
  },
  {
    name: "D1 refusing writes past the retry budget",
    outcome: "error",
    partialStore: true,
    note: "the run ends `error`; D1 keeps the windows written before the failure, whole; the coordinator's summary (GET /summary) keeps everything merged",
    async during({ t0 }) {
      await until(t0 + 1_000);
      await renameWindows("windows", "windows_away");
    },
    async after() {
      await renameWindows("windows_away", "windows");
    },
  },
  {
    name: "R2 seed read failing at first load",
    outcome: "passed",
    spec: { data: { seed: SEED }, steps: [{ path: "/delay?ms=5&user={{data.userId}}", checks: [{ status: 200 }] }] },
    note: "the shard's first alarm fails; the runtime retries it, and the iterations that fell due meanwhile are sent late (schedule lag) or dropped",
    async during({ t0 }) {
      const key = seedObjectKey(SEED);
      const saved = (await env.SEEDS.get(key))!;
      const body = await saved.arrayBuffer();
      await env.SEEDS.delete(key);
      await until(t0 + 1_000);
      await env.SEEDS.put(key, body, { httpMetadata: saved.httpMetadata, customMetadata: saved.customMetadata });
    },
  },
];

describe("faults inside workerd: the run's storage", () => {
  it("uploads the seed set the R2 row reads", async () => {
    const users = Array.from({ length: 50 }, (_, i) => ({ email: `fault-${i}@example.test`, userId: `u${i}` }));
    const response = await api(`/v1/seeds/${SEED}`, { method: "PUT", body: JSON.stringify({ users }) });
    if (!response.ok) throw new Error(`seed upload: ${response.status} ${await response.text()}`);
  });

  for (const row of faultRows(faults)) {
    it(row.title, async ({ task }) => {
      task.meta.fault = await row.observe();
    });
  }
});
