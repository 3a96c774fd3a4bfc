import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeloadClient } from "./client.ts";
import { probeStrictValidation } from "./strict-probe.ts";

/** A provider on loopback whose /introspect says `active` for every token, and serves a seed. */
let server: Server;
let origin: string;
let active = true;
const introspected: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url?.startsWith("/seed")) return response.end(JSON.stringify(["wrong-audience-token"]));
    let body = "";
    request.on("data", (c) => (body += c));
    request.on("end", () => {
      introspected.push(new URLSearchParams(body).get("token") ?? "");
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ active }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => server?.close());

const client = { seedUrl: async () => ({ url: `${origin}/seed`, expiresAt: "" }) } as unknown as EdgeloadClient;
const spec = () => ({
  target: origin,
  executor: "constant-arrival-rate",
  rate: 10,
  duration: "5s",
  scenario: { name: "introspect", seed: "tokens", clientId: "cid", clientSecret: "secret" },
});

describe("probeStrictValidation", () => {
  it("says how to turn strict validation on when the provider accepts a wrong-audience token", async () => {
    active = true;
    const lines: string[] = [];
    expect(await probeStrictValidation(client, spec(), (l) => lines.push(l))).toBe("accepts");
    expect(introspected.at(-1)).toBe("wrong-audience-token");
    expect(lines.join("\n")).toMatch(/answered active=true for a token minted for another audience[\s\S]*"strictValidation": true/);
  });

  it("stays quiet when the provider rejects it, and does not probe other scenarios", async () => {
    active = false;
    const lines: string[] = [];
    expect(await probeStrictValidation(client, spec(), (l) => lines.push(l))).toBe("rejects");
    expect(await probeStrictValidation(client, { ...spec(), scenario: { name: "userinfo", seed: "tokens" } }, (l) => lines.push(l))).toBe("not probed");
    expect(lines).toEqual([]);
  });

  it("says so when the provider cannot be asked, rather than passing over it in silence", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(closed.address() as { port: number }).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const lines: string[] = [];
    expect(await probeStrictValidation(client, { ...spec(), target }, (l) => lines.push(l))).toBe("not probed");
    expect(lines).toEqual([`⚠ pre-flight: could not check whether ${target} rejects a token minted for another audience: ECONNREFUSED`]);
  });
});
