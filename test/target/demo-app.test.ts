/**
 * The demo app under /app (workers/target/demo-app.ts) inside workerd with its D1: the
 * user lifecycle the closed-model examples run, and the messaging endpoint.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

function call(method: string, path: string, init: { body?: unknown; token?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  return (exports as unknown as { default: Fetcher }).default.fetch(
    new Request(`http://target.test${path}`, {
      method,
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    }),
  );
}

describe("/app user lifecycle", () => {
  it("registers once, logs in, answers /user with the token, and refuses it after logout", async () => {
    const user = { username: "alice_1", email: "Alice@example.test", password: "correct horse" };
    const created = await call("POST", "/app/v1/user", { body: user });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ username: "alice_1", email: "alice@example.test" });
    expect((await call("POST", "/app/v1/user", { body: user })).status).toBe(409);
    expect((await call("POST", "/app/v1/user", { body: { ...user, username: "alice_2" } })).status).toBe(409); // same email
    expect((await call("POST", "/app/v1/user", { body: { ...user, username: "x" } })).status).toBe(400);

    expect((await call("POST", "/app/login", { body: { username: "alice_1", password: "wrong password" } })).status).toBe(401);
    const login = await call("POST", "/app/login", { body: { username: "alice_1", password: "correct horse" } });
    const { token } = await login.json<{ token: string }>();
    expect(token).toMatch(/^[0-9a-f]{48}$/);

    const me = await call("GET", "/app/user", { token });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: "alice_1", email: "alice@example.test" });
    expect((await call("GET", "/app/user")).status).toBe(401);

    expect((await call("DELETE", "/app/logout", { token })).status).toBe(204);
    expect((await call("GET", "/app/user", { token })).status).toBe(401);
    expect((await call("DELETE", "/app/logout", { token })).status).toBe(401);
    expect(await (await call("GET", "/app/stats")).json()).toEqual({ users: 1, liveTokens: 0, revokedTokens: 1 });
  });
});

describe("/app/messages/send", () => {
  const message = { conv_id: "c-1", from_device_id: "d-1", to_device_id: "d-2", ciphertext: btoa("secret"), header: { v: 1 } };

  it("accepts a well-formed message with a bearer token (202) and refuses bad ones", async () => {
    const ok = await call("POST", "/app/messages/send", { body: message, token: "any" });
    expect(ok.status).toBe(202);
    expect((await ok.json<{ message_id: string }>()).message_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await call("POST", "/app/messages/send", { body: message })).status).toBe(401);
    expect((await call("POST", "/app/messages/send", { body: { ...message, ciphertext: "not base64!" }, token: "any" })).status).toBe(400);
    expect((await call("POST", "/app/messages/send", { body: { ...message, conv_id: "" }, token: "any" })).status).toBe(400);
  });
});
