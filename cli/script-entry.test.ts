/**
 * A k6 script written in TypeScript, as k6 1.x runs it, is a script to edgeload too: its
 * types are stripped when it is bundled, and its options become the run. It used to be
 * read as a spec file ("… is not valid JSON").
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { edgeloadInProcess } from "../test/support/cli-in-process.ts";

const edgeload = edgeloadInProcess();
let dir: string;

beforeAll(async () => {
  vi.stubEnv("EDGELOAD_URL", "");
  dir = await mkdtemp(join(tmpdir(), "edgeload-ts-entry-"));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

describe("a TypeScript entry script", () => {
  it("is planned from its options, its type annotations stripped", async () => {
    const path = join(dir, "load.ts");
    await writeFile(
      path,
      [
        'import http from "k6/http";',
        "interface Target { readonly path: string }",
        'const target: Target = { path: "/delay?ms=5" };',
        'export const options = { scenarios: { api: { executor: "constant-arrival-rate", rate: 20, timeUnit: "1s", duration: "10s", preAllocatedVUs: 5 } } };',
        "export default function (): void { http.get(__ENV.BASE_URL + target.path); }",
      ].join("\n"),
    );
    const { code, stdout, stderr } = await edgeload("plan", path, "-e", "BASE_URL=http://127.0.0.1:9090", "--format", "json");
    expect(code, stderr).toBe(0);
    const planned = JSON.parse(stdout) as { spec: { name: string }; plan: { totalIterations: number } };
    expect(planned.spec.name).toBe("load.ts");
    expect(planned.plan.totalIterations).toBe(200); // 20/s for 10 s
  });
});
