/**
 * A shard's browser session (workers/shard/browser-session.ts) on the local Browser Run
 * binding, which starts Debian's Chromium through the shim cli/local-chromium.ts writes
 * (vitest.config.ts sets it up): one session kept across two alarms of a shard, the second
 * alarm in a new instance after an eviction, reconnecting with the id the first stored; a
 * session that is gone replaced by a new one; the last alarm closing it.
 *
 * Each alarm here is one event of a LoadShard object (runInDurableObject), with its storage.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sessions } from "@cloudflare/playwright";
import { describe, expect, it } from "vitest";
import { BROWSER_SESSION_KEY, closeSession, ShardBrowser, type SessionEvent } from "../../workers/shard/browser-session.ts";

const binding = () => {
  if (!env.BROWSER) throw new Error("wrangler.toml has no [browser] binding");
  return env.BROWSER;
};

/** One alarm of the shard: a fresh owner over the object's storage, a page opened and closed in a context of its own. */
async function alarm(stub: DurableObjectStub, final = false): Promise<{ events: SessionEvent[]; sessionId: string | null; text: string }> {
  return runInDurableObject(stub, async (_instance, state) => {
    const events: SessionEvent[] = [];
    const owner = new ShardBrowser(binding(), state.storage.kv, (event) => events.push(event));
    const context = await owner.newContext();
    const page = await context.newPage();
    await page.setContent("<h1>edgeload</h1>");
    const text = (await page.locator("h1").textContent()) ?? "";
    await context.close();
    const sessionId = owner.sessionId;
    await owner.endInvocation(final);
    return { events, sessionId, text };
  });
}

/** Ends a session as a lost one ends: closed, and gone from the binding's list of sessions. */
async function endSession(sessionId: string): Promise<void> {
  await closeSession(binding(), sessionId);
  for (let i = 0; i < 50 && (await sessions(binding())).some((s) => s.sessionId === sessionId); i++) await new Promise((r) => setTimeout(r, 100));
}

const stubOf = (name: string) => env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-session-${name}-${crypto.randomUUID()}`));

describe("a shard's browser session", () => {
  it("is acquired once and reconnected in the next alarm, after an eviction, with its stored id", async () => {
    const stub = stubOf("reuse");
    const first = await alarm(stub);
    expect(first.events).toEqual(["acquired"]);
    expect(first.text).toBe("edgeload");
    expect(first.sessionId).toMatch(/\S/);

    await evictDurableObject(stub);
    const second = await alarm(stub);
    expect(second.events).toEqual(["reconnected"]);
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.text).toBe("edgeload");

    // The last alarm ends the session and forgets it.
    const last = await alarm(stub, true);
    expect(last.events).toEqual(["reconnected"]);
    expect(await runInDurableObject(stub, (_i, state) => state.storage.kv.get(BROWSER_SESSION_KEY))).toBeUndefined();
  });

  it("replaces a session that is gone with a new one, and stores the new id", async () => {
    const stub = stubOf("lost");
    const first = await alarm(stub);
    expect(first.events).toEqual(["acquired"]);
    // The session ends between two alarms (keep_alive ran out, the browser crashed).
    await endSession(first.sessionId!);

    const second = await alarm(stub, true);
    // The local binding may still answer the connection to a closed session for a moment (Browser
    // Run refuses it): then the first context fails on it, and the session is replaced there.
    expect(second.events.filter((e) => e === "replaced")).toEqual(["replaced"]);
    expect(second.events.at(-1)).toBe("replaced");
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(second.text).toBe("edgeload");
  });
});
