/**
 * `edgeload verify` and `edgeload plan`'s ownership line, against a local fake of the API:
 * what is printed (the exact record in both forms), which route is asked, and the exit code
 * (0 verified, 104 not); a 403 target-not-verified from the API is 104 like target-not-allowed.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";
import { startServer, type Received, type TestServer } from "../test/support/cloudflare-analytics.ts";
import type { TargetVerification } from "./client.ts";
import { exitCodeOfApiStatus } from "./exit-codes.ts";

const LINE = `edgeload-verification=${"ab".repeat(32)}`;

function view(state: TargetVerification["state"], over: Partial<TargetVerification> = {}): TargetVerification {
  const verified = state !== "unverified";
  return {
    host: "api.example.com",
    required: true,
    why: "a deployed coordinator loads only targets whose owner proved control",
    state,
    method: verified ? "dns" : null,
    verifiedAt: verified ? "2026-11-01T12:00:00.000Z" : null,
    expiresAt: verified ? "2026-11-08T12:00:00.000Z" : null,
    checkedAt: "2026-11-01T12:00:00.000Z",
    lastCheck: verified ? "TXT record at _edgeload.api.example.com" : "no TXT record at _edgeload.api.example.com (NXDOMAIN)",
    publish: {
      dns: { name: "_edgeload.api.example.com", type: "TXT", value: LINE },
      wellKnown: { url: "https://api.example.com/.well-known/edgeload-verification", line: LINE },
    },
    instructions: `publish a DNS TXT record at _edgeload.api.example.com with the value "${LINE}", or serve …`,
    ...over,
  };
}

const edgeload = edgeloadInProcess();
let server: TestServer | undefined;
let dir: string;

/** A fake API answering every verification route with `answer`, and POST /v1/plan with an allowed target. */
async function api(answer: (r: Received) => TargetVerification): Promise<TestServer> {
  server = await startServer((r) =>
    r.path === "/v1/plan" ? { status: 200, body: { target: { url: "x", allowed: true } } } : { status: 200, body: answer(r) },
  );
  vi.stubEnv("EDGELOAD_URL", server.url);
  vi.stubEnv("EDGELOAD_TOKEN", "t");
  return server;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "edgeload-verify-"));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe("edgeload verify", () => {
  it("checks now (POST), prints the exact record in both forms and what was found, and exits 104 when not verified", async () => {
    const fake = await api(() =>
      view("unverified", { findings: [{ method: "dns", found: false, detail: "no TXT record at _edgeload.api.example.com (NXDOMAIN)" }] }),
    );
    const { code, stdout } = await edgeload("verify", "API.example.com");
    expect(code).toBe(104);
    expect(fake.received.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/targets/api.example.com/verification"]);
    expect(stdout).toContain("api.example.com: not verified");
    expect(stdout).toContain("not found (dns): no TXT record at _edgeload.api.example.com (NXDOMAIN)");
    expect(stdout).toMatch(new RegExp(`a DNS TXT record +_edgeload\\.api\\.example\\.com\\n +with the value +${LINE}`));
    expect(stdout).toMatch(new RegExp(`or a file +https://api\\.example\\.com/\\.well-known/edgeload-verification\\n +with the line +${LINE}`));
    expect(stdout).toContain("This deployment asks it: a deployed coordinator loads only targets whose owner proved control.");
  });

  it("exits 0 once the host is verified, saying until when", async () => {
    await api(() => view("verified"));
    const { code, stdout } = await edgeload("verify", "api.example.com");
    expect(code).toBe(0);
    expect(stdout).toContain("api.example.com: verified by its DNS TXT record on 2026-11-01 12:00 UTC; it stands until 2026-11-08 12:00 UTC");
  });

  it("--status only reads (GET); an expired proof is not a pass", async () => {
    const fake = await api(() => view("expired"));
    const { code, stdout } = await edgeload("verify", "api.example.com", "--status");
    expect(code).toBe(104);
    expect(fake.received.map((r) => r.method)).toEqual(["GET"]);
    expect(stdout).toContain("the proof by its DNS TXT record expired on 2026-11-08 12:00 UTC");
  });

  it("takes a loopback target URL, whose origin the well-known file is read at", async () => {
    const fake = await api(() => view("verified", { host: "127.0.0.1" }));
    await edgeload("verify", "http://127.0.0.1:9090/some/path");
    expect(fake.received[0]!.path).toBe(`/v1/targets/127.0.0.1/verification?target=${encodeURIComponent("http://127.0.0.1:9090")}`);
  });

  it("refuses a host with a port, or no host, before asking anything (104)", async () => {
    const fake = await api(() => view("verified"));
    const withPort = await edgeload("verify", "api.example.com:8443");
    expect(withPort.code).toBe(104);
    expect(withPort.stderr).toContain('"api.example.com:8443" has a port');
    expect((await edgeload("verify")).code).toBe(104);
    expect(fake.received).toEqual([]);
  });
});

describe("edgeload plan with a deployment named", () => {
  async function planOf(target: string) {
    const file = join(dir, "spec.json");
    await writeFile(file, JSON.stringify({ target, steps: [{ path: "/" }], executor: "constant-arrival-rate", rate: 10, duration: "10s" }));
    return edgeload("plan", file);
  }

  it("prints the target's ownership and exits 104 when the deployment asks proof it does not have", async () => {
    const fake = await api(() => view("unverified"));
    const { code, stdout, stderr } = await planOf("https://api.example.com:8443/base");
    expect(fake.received.map((r) => `${r.method} ${r.path}`)).toContain(
      `GET /v1/targets/api.example.com/verification?target=${encodeURIComponent("https://api.example.com:8443")}`,
    );
    expect(stdout).toContain(`target ownership: not verified — publish a DNS TXT record at _edgeload.api.example.com with the value "${LINE}"`);
    expect(stderr).toContain("the deployment has no proof that api.example.com is yours");
    expect(code).toBe(104);
  });

  it("a verified target passes, its proof's end printed", async () => {
    await api(() => view("verified"));
    const { code, stdout } = await planOf("https://api.example.com");
    expect(stdout).toContain("target ownership: verified by its DNS TXT record until 2026-11-08 12:00 UTC");
    expect(code).toBe(0);
  });

  it("a deployment older than the route is not a failure: the line says ownership was not reported", async () => {
    const notFound = { type: "https://edgeload.dev/problems/not-found", title: "Not found", status: 404, detail: "route does not exist" };
    server = await startServer((r) =>
      r.path === "/v1/plan"
        ? { status: 200, body: { target: { url: "x", allowed: true } } }
        : { status: 404, headers: { "content-type": "application/problem+json" }, body: notFound },
    );
    vi.stubEnv("EDGELOAD_URL", server.url);
    vi.stubEnv("EDGELOAD_TOKEN", "t");
    const { code, stdout } = await planOf("https://api.example.com");
    expect(stdout).toContain("target ownership: not reported by this deployment");
    expect(code).toBe(0);
  });

  it("a target the deployment asks no proof of passes, saying why", async () => {
    await api(() => view("unverified", { required: false, why: "TARGET_VERIFICATION=off: this deployment loads its allowed targets without proof" }));
    const { code, stdout } = await planOf("https://api.example.com");
    expect(stdout).toContain("target ownership: not asked (TARGET_VERIFICATION=off");
    expect(code).toBe(0);
  });
});

describe("the exit code of a refused run", () => {
  it("is 104 for target-not-verified, as for target-not-allowed: input to fix, not a credential", () => {
    expect(exitCodeOfApiStatus(403, "https://edgeload.dev/problems/target-not-verified")).toBe(104);
    expect(exitCodeOfApiStatus(403, "https://edgeload.dev/problems/target-not-allowed")).toBe(104);
    expect(exitCodeOfApiStatus(403, "https://edgeload.dev/problems/read-only-token")).toBe(77);
  });
});
