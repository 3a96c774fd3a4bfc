/**
 * A results database that refuses writes for a while must not strand a run: the
 * coordinator retries its ticks with backoff (showing the error in the run's status),
 * then writes everything once D1 accepts again. This file has its own D1 (isolated
 * storage per test file), so breaking its `windows` table affects no other test.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createRun, sleep, waitForStatus } from "./helpers.ts";

describe("coordinator resilience", () => {
  it("retries while D1 refuses window writes, says so in the status, and finishes once D1 is back", async () => {
    await env.DB.exec("ALTER TABLE windows RENAME TO windows_away");
    let restored = false;
    try {
      const { id } = await createRun({ rate: 20, duration: "2s" });
      let seen: string | null = null;
      for (let i = 0; i < 60 && !seen; i++) {
        const view = (await (await api(`/v1/runs/${id}`)).json()) as { lastError: string | null };
        seen = view.lastError;
        if (!seen) await sleep(250);
      }
      expect(seen).toMatch(/windows/);
      await env.DB.exec("ALTER TABLE windows_away RENAME TO windows");
      restored = true;
      const final = await waitForStatus(id, undefined, 60_000);
      expect(final.status).toBe("passed");
      expect(final.lastError).toBeNull();
      const row = await env.DB.prepare("SELECT SUM(requests) AS n FROM windows WHERE run_id = ?").bind(id).first<{ n: number }>();
      expect(row!.n).toBe(40);
    } finally {
      if (!restored) await env.DB.exec("ALTER TABLE windows_away RENAME TO windows");
    }
  });
});
