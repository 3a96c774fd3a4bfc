/**
 * The target's deterministic knobs (workers/target/knobs.ts) inside workerd: `maxRps`
 * sheds the requests over N in each wall-clock second with 503, and leaves the other knobs
 * as they were.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

function call(path: string): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(`http://target.test${path}`));
}

/** Waits for the start of the next wall-clock second, so a burst stays within one. */
async function nextSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));
}

async function statuses(path: string, n: number): Promise<number[]> {
  const responses = await Promise.all(Array.from({ length: n }, () => call(path)));
  return Promise.all(responses.map(async (r) => (await r.arrayBuffer(), r.status)));
}

const count = (list: readonly number[], status: number) => list.filter((s) => s === status).length;

describe("maxRps", () => {
  it("serves N requests in a second, answers 503 to the rest at once, and serves again the next second", async () => {
    await nextSecond();
    const first = await statuses("/delay?maxRps=5", 8);
    expect([count(first, 200), count(first, 503)]).toEqual([5, 3]);

    const started = Date.now();
    const shed = await call("/delay?maxRps=5&ms=500");
    expect(shed.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(400); // shed before the delay knob
    expect(shed.headers.get("retry-after")).toBe("1");
    expect(await shed.json()).toEqual({ ok: false, error: "over maxRps" });

    await nextSecond();
    expect(await statuses("/delay?maxRps=5", 5)).toEqual([200, 200, 200, 200, 200]);
  });

  it("does not count requests without maxRps, nor limit them", async () => {
    await nextSecond();
    expect(count(await statuses("/delay", 20), 200)).toBe(20);
    expect(count(await statuses("/delay?maxRps=3", 4), 200)).toBe(3);
    expect(count(await statuses("/other", 10), 200)).toBe(10);
  });

  it("answers 503 to everything at maxRps=0", async () => {
    expect(await statuses("/delay?maxRps=0", 3)).toEqual([503, 503, 503]);
  });
});

describe("the other knobs, unchanged", () => {
  it("fail=0.25 fails exactly every fourth request with failStatus", async () => {
    const list = [];
    for (let i = 0; i < 20; i++) list.push((await call("/api?fail=0.25&failStatus=502")).status);
    expect(count(list, 502)).toBe(5);
    expect(count(list, 200)).toBe(15);
  });

  it("status=, size= and ms= shape the answer", async () => {
    const started = Date.now();
    const r = await call("/api?status=201&size=10&ms=50");
    expect(r.status).toBe(201);
    expect(await r.text()).toBe("x".repeat(10));
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });
});
