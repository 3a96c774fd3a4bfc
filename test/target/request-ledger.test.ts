/**
 * The target's count of each edgeload run's requests (workers/target/request-ledger.ts)
 * inside workerd: tagged requests are counted by second and step on arrival, whatever
 * they answer; untagged or malformed tags are not; reading the counts needs the admin
 * secret.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const ADMIN = { authorization: "Bearer admin-test-secret" };
const RUN = "r-mk0abc12-0123abcd";

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(`http://target.test${path}`, init));
}

describe("request ledger", () => {
  it("counts tagged requests by second and step on arrival, a failing answer included", async () => {
    const tagged = (second: number, step: number, path = "/delay?ms=0") =>
      call(path, { headers: { "x-edgeload-run": `${RUN};${second};${step}` } }).then((r) => r.arrayBuffer());
    await Promise.all([tagged(0, 0), tagged(0, 0), tagged(0, 1), tagged(1, 0, "/delay?ms=0&status=503")]);
    await call("/delay?ms=0").then((r) => r.arrayBuffer()); // untagged
    await call("/delay?ms=0", { headers: { "x-edgeload-run": `${RUN};soon;0` } }).then((r) => r.arrayBuffer()); // malformed
    const response = await call(`/api/admin/test/request-ledger?run=${RUN}`, { headers: ADMIN });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      run: RUN,
      total: 4,
      rows: [
        { second: 0, step: 0, count: 2 },
        { second: 0, step: 1, count: 1 },
        { second: 1, step: 0, count: 1 },
      ],
    });
  });

  it("answers only the admin, and only for a run id", async () => {
    expect((await call(`/api/admin/test/request-ledger?run=${RUN}`)).status).toBe(401);
    expect((await call("/api/admin/test/request-ledger?run=nope", { headers: ADMIN })).status).toBe(400);
  });
});
