/**
 * Delivery end to end: every request a run sends carries its run id, second and step; the
 * local target counts them on arrival; what was sent and what was received match second by
 * second at 50/s and 500/s. Through a loopback proxy that refuses a counted share of
 * connections, the difference shows and is put down to the client's connection errors.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDelivery } from "../../cli/delivery-check.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-delivery-");

async function run(target: string, rate: number, duration: string) {
  const { client } = fixture;
  const created = await client.createRun({
    name: `delivery ${rate}/s`,
    target,
    steps: [{ name: "delay", path: "/delay?ms=5" }],
    executor: "constant-arrival-rate",
    rate,
    duration,
    shards: 4,
    regions: ["wnam", "enam"],
    maxVUs: Math.max(50, rate),
    timeout: "5s",
  });
  await client.waitForEnd(created.id, () => {}, 500);
  return created.id;
}

describe("delivery: sent against received", () => {
  it.each([[50], [500]])(
    "at %i/s for 10 s, the target received every request, in the second it was sent",
    async (rate) => {
      const { client, stack } = fixture;
      const id = await run(stack.targetUrl, rate, "10s");
      const d = await checkDelivery(client, id, { origin: stack.targetUrl, adminSecret: stack.targetAdminSecret });
      expect(d.totals).toEqual({ sent: rate * 10, received: rate * 10, difference: 0, differenceShare: 0 });
      expect(d.rows.filter((r) => r.difference !== 0)).toEqual([]);
      // Seconds 0–9 (a request delayed past the tenth second is counted in second 10 on both sides).
      expect(d.rows.map((r) => r.second).slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => i));
      expect(d.perStep).toEqual([{ step: "delay", sent: rate * 10, received: rate * 10, difference: 0 }]);
    },
    60_000,
  );

  describe("through a proxy that refuses every fifth connection", () => {
    let proxy: Server;
    let refused = 0;
    const open = new Set<Socket>();
    beforeAll(async () => {
      const upstream = new URL(fixture.stack.targetUrl);
      let accepted = 0;
      proxy = createServer((client: Socket) => {
        open.add(client);
        client.on("close", () => open.delete(client));
        if (++accepted % 5 === 0) {
          refused++;
          client.resetAndDestroy();
          return;
        }
        // One request per connection: the response goes back, then the connection closes,
        // so every request comes through a connection of its own.
        const target = connect(Number(upstream.port), upstream.hostname);
        client.pipe(target);
        target.once("data", (chunk) => {
          client.end(chunk);
          target.destroy();
        });
        target.on("error", () => client.destroy());
        client.on("error", () => target.destroy());
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    });
    // Connections the client keeps alive would hold close() open: end them first.
    afterAll(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of open) socket.destroy();
          proxy.close(() => resolve());
        }),
    );

    it("shows the refused requests as the difference, put down to connection errors", async () => {
      const { client, stack } = fixture;
      const address = proxy.address() as { port: number };
      const id = await run(`http://127.0.0.1:${address.port}`, 50, "4s");
      const d = await checkDelivery(client, id, { origin: stack.targetUrl, adminSecret: stack.targetAdminSecret });
      // Every iteration of the schedule was sent or dropped, none lost. On a busy machine
      // (CI, twice in a row; never alone, even beside two CPU hogs) shards reached their
      // in-flight cap on this run and dropped 46 (and once 48) of the 200; what was sent must
      // still reconcile below.
      const metrics = (await client.summary(id)).metrics as Record<string, { count?: number }>;
      const dropped = metrics.dropped_iterations?.count ?? 0;
      expect(d.totals.sent + dropped, `sent ${d.totals.sent}, dropped ${dropped}`).toBe(200);
      expect(d.totals.sent).toBeGreaterThan(100);
      expect(refused).toBeGreaterThan(0);
      // A refused connection costs at most one request. workerd may open a connection it then
      // does not use, or retry a request whose fresh connection was reset before anything was
      // written, so the proxy's count is an upper bound; what must hold exactly is that every
      // missing request is one the client itself saw fail to connect.
      expect(d.totals.difference).toBeGreaterThan(0);
      expect(d.totals.difference).toBeLessThanOrEqual(refused);
      // Near one to one when every iteration went out (the bound was measured on such runs).
      if (dropped === 0) expect(d.totals.difference).toBeGreaterThanOrEqual(refused - 2);
      expect(d.attribution).toEqual({ connectionErrors: d.totals.difference, timeouts: 0, unexplained: 0 });
      expect(d.findings).toContain(`${d.totals.difference} never reached the target: the client could not connect (connection errors)`);
    }, 60_000);
  });
});
