import { describe, expect, it } from "vitest";
import { validSpec } from "../test/support/run-spec-fixtures.ts";
import { phaseFailure, runPhase } from "./run-phase.ts";

const spec = validSpec({
  target: "http://127.0.0.1:9",
  executor: "constant-arrival-rate",
  rate: 1,
  duration: "1s",
  setup: [
    { name: "login", method: "POST", path: "/login", body: { user: "a" }, capture: { token: { json: "$.token" } } },
    { name: "seed", method: "POST", path: "/records/bulk", headers: { authorization: "Bearer {{captured.token}}" }, body: { count: 3 } },
  ],
  steps: [{ path: "/records/{{setup.token}}" }],
});

/** A scripted target: answers by path, recording what it was sent. */
function target(answers: Record<string, () => Response>) {
  const sent: Array<{ url: string; auth: string | null }> = [];
  const fetcher = (async (url: string, init: RequestInit) => {
    sent.push({ url, auth: new Headers(init.headers).get("authorization") });
    return answers[new URL(url).pathname]!();
  }) as unknown as typeof fetch;
  return { fetcher, sent };
}

describe("runPhase", () => {
  it("sends the steps once, in order, passing captures along and returning them", async () => {
    const t = target({ "/login": () => Response.json({ token: "tok-1" }), "/records/bulk": () => Response.json({ created: 3 }) });
    const result = await runPhase(spec, spec.setup!, t.fetcher);
    expect(result.ok).toBe(true);
    expect(result.captured).toEqual({ token: "tok-1" });
    expect(result.steps.map((s) => [s.name, s.status, s.ok])).toEqual([
      ["login", 200, true],
      ["seed", 200, true],
    ]);
    expect(t.sent).toEqual([
      { url: "http://127.0.0.1:9/login", auth: null },
      { url: "http://127.0.0.1:9/records/bulk", auth: "Bearer tok-1" },
    ]);
  });

  it("stops at the first failing step and says why", async () => {
    const t = target({ "/login": () => new Response("locked", { status: 423 }), "/records/bulk": () => Response.json({}) });
    const result = await runPhase(spec, spec.setup!, t.fetcher);
    expect(result.ok).toBe(false);
    expect(t.sent).toHaveLength(1);
    expect(phaseFailure("setup", result, spec.setup!)).toBe("setup step login failed: status 423: locked");
  });

  it("fails a step whose capture finds nothing", async () => {
    const t = target({ "/login": () => Response.json({ nothing: true }), "/records/bulk": () => Response.json({}) });
    const result = await runPhase(spec, spec.setup!, t.fetcher);
    expect(result.ok).toBe(false);
    expect(result.steps[0]!.problem).toBe("a check or capture failed");
    expect(t.sent).toHaveLength(1);
  });
});
