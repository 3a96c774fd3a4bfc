/**
 * Proof of target ownership through the real routes, D1 and the outbound module: with
 * TARGET_VERIFICATION=all (how loopback targets are made to need proof under wrangler dev),
 * a run against a loopback target without proof is refused with 403 target-not-verified
 * naming the exact record; a TXT record served by a loopback DNS-over-HTTPS stand-in, or the
 * well-known file served by the target itself (the stand-in plays the target:
 * test/workers/verification-server.ts), lets it in; a withdrawn record makes the host
 * unverified at its next check.
 *
 * The Worker's bindings say nothing of TARGET_VERIFICATION, so these requests go to the
 * Hono app with the test's env plus the two vars.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { api as app } from "../../coordinator/http/api.ts";
import { api, spec, TOKEN } from "./helpers.ts";

const SERVER = env.VERIFICATION_SERVER_URL;
const HOST = "127.0.0.1";
const RECORD = `_edgeload.${HOST}`;

/** A call to the coordinator as a deployment with `vars` set would answer it. */
async function call(path: string, init: RequestInit = {}, vars: Record<string, string> = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${TOKEN}`);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const varsEnv = { ...env, TARGET_VERIFICATION: "all", TARGET_VERIFICATION_DOH: `${SERVER}/dns-query`, ...vars };
  return app.fetch(new Request(`http://edgeload.test${path}`, { ...init, headers }), varsEnv, createExecutionContext());
}

/** A short run against the stand-in, which answers any path with 200. */
const standInRun = () => spec({ target: SERVER, steps: [{ path: "/ok" }], rate: 5, duration: "1s", shards: 1, regions: ["wnam"] });

async function startRun(): Promise<Response> {
  const response = await call("/v1/runs", { method: "POST", body: JSON.stringify(standInRun()) });
  // An admitted run is aborted at once: only its admission is under test.
  if (response.status === 201) await api(`/v1/runs/${((await response.clone().json()) as { id: string }).id}/abort`, { method: "POST" });
  return response;
}

const control = (path: string, body: unknown) => fetch(`${SERVER}/control/${path}`, { method: path === "reset" ? "POST" : "PUT", body: JSON.stringify(body) });

interface VerificationView {
  state: string;
  method: string | null;
  lastCheck: string | null;
  expiresAt: string | null;
  required: boolean;
  publish: { dns: { name: string; value: string }; wellKnown: { url: string; line: string } };
  findings?: Array<{ method: string; found: boolean; detail: string }>;
}

async function verification(method: "GET" | "POST"): Promise<VerificationView> {
  const response = await call(`/v1/targets/${HOST}/verification?target=${encodeURIComponent(SERVER)}`, { method });
  expect(response.status).toBe(200);
  return response.json();
}

/** The line this deployment's key gives 127.0.0.1, computed here from the key in D1. */
async function expectedLine(): Promise<string> {
  await verification("GET"); // makes the key on first use
  const row = await env.DB.prepare("SELECT value FROM settings WHERE name = 'target_verification_key'").first<{ value: string }>();
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(row!.value), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`edgeload target v1\n${HOST}`)));
  return `edgeload-verification=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

beforeEach(async () => {
  await control("reset", {});
  await env.DB.prepare("DELETE FROM verified_targets").run();
});

describe("proof of target ownership (TARGET_VERIFICATION=all)", () => {
  it("refuses a run against a loopback target without proof, naming the exact record in both forms", async () => {
    const line = await expectedLine();
    const response = await startRun();
    expect(response.status).toBe(403);
    const problem = (await response.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/\/target-not-verified$/);
    expect(problem.detail).toContain(`a DNS TXT record at ${RECORD} with the value "${line}"`);
    expect(problem.detail).toContain(`serve ${SERVER}/.well-known/edgeload-verification with the line ${line}`);
    expect(problem.detail).toContain(`no TXT record at ${RECORD} (NXDOMAIN)`);
    const view = await verification("GET");
    expect(view).toMatchObject({ state: "unverified", required: true, publish: { dns: { name: RECORD, value: line } } });
  });

  it("admits the run once the TXT record is published, read over DNS-over-HTTPS JSON", async () => {
    await control("txt", { name: RECORD, values: ["v=spf1 -all", await expectedLine()] });
    const response = await startRun();
    expect(response.status).toBe(201);
    const queries = (await (await fetch(`${SERVER}/control/dns-queries`)).json()) as Array<{ url: string; accept: string }>;
    expect(queries).toContainEqual({ url: `/dns-query?name=${RECORD}&type=TXT`, accept: "application/dns-json" });
    expect(await verification("GET")).toMatchObject({ state: "verified", method: "dns" });
  });

  it("admits the run once the target serves the well-known file", async () => {
    await control("well-known", { status: 200, body: `# edgeload\n${await expectedLine()}\n` });
    expect((await startRun()).status).toBe(201);
    expect(await verification("GET")).toMatchObject({ state: "verified", method: "well-known" });
  });

  it("a withdrawn record: the proof stands until it is checked again, then the host is unverified and runs are refused", async () => {
    await control("txt", { name: RECORD, values: [await expectedLine()] });
    expect(await verification("POST")).toMatchObject({ state: "verified", method: "dns" });
    await control("txt", { name: RECORD, values: [] });
    // Until its expiry the stored proof stands: admission does not look again.
    expect((await startRun()).status).toBe(201);
    const rechecked = await verification("POST");
    expect(rechecked).toMatchObject({ state: "unverified", method: null, expiresAt: null });
    expect(rechecked.findings).toContainEqual({ method: "dns", found: false, detail: `no TXT record at ${RECORD} (NXDOMAIN)` });
    expect((await startRun()).status).toBe(403);
  });

  it("an expired proof is checked again at admission: a record withdrawn since refuses the run", async () => {
    await control("txt", { name: RECORD, values: [await expectedLine()] });
    expect(await verification("POST")).toMatchObject({ state: "verified" });
    await control("txt", { name: RECORD, values: [] });
    // A week has passed: the row's expiry is behind us.
    await env.DB.prepare("UPDATE verified_targets SET expires_at = ? WHERE host = ?")
      .bind(Date.now() - 1, HOST)
      .run();
    expect((await verification("GET")).state).toBe("expired");
    const response = await startRun();
    expect(response.status).toBe(403);
    expect((await verification("GET")).state).toBe("unverified");
  });
});

describe("TARGET_VERIFICATION itself", () => {
  it("unset under wrangler dev: a loopback run needs no proof", async () => {
    const response = await call("/v1/runs", { method: "POST", body: JSON.stringify(standInRun()) }, { TARGET_VERIFICATION: "" });
    expect(response.status).toBe(201);
    await api(`/v1/runs/${((await response.json()) as { id: string }).id}/abort`, { method: "POST" });
  });

  it("an unknown value refuses runs, naming the var, instead of turning the check off", async () => {
    const response = await call("/v1/runs", { method: "POST", body: JSON.stringify(standInRun()) }, { TARGET_VERIFICATION: "of" });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { detail: string }).detail).toContain('TARGET_VERIFICATION is "of"; use on, off or all');
  });

  it("refuses a host that is not a bare host name", async () => {
    const response = await call("/v1/targets/127.0.0.1:8080/verification");
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("has a port");
  });
});
