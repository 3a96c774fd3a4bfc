/**
 * The project builds as a user deploys it: `wrangler deploy --dry-run` bundles the
 * coordinator Worker, and both TypeScript programs (Workers and Node) typecheck strictly.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../scripts/cli/local-stack.ts";

const run = promisify(execFile);
const bin = (name: string) => join(PROJECT_ROOT, "node_modules/.bin", name);
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

describe("build", () => {
  it("bundles the coordinator Worker with wrangler deploy --dry-run", async () => {
    const outdir = await mkdtemp(join(tmpdir(), "edgeload-bundle-"));
    try {
      const { stdout } = await run(bin("wrangler"), ["deploy", "--dry-run", "--outdir", outdir], { cwd: PROJECT_ROOT, env });
      expect(stdout).toMatch(/--dry-run: exiting now/);
      expect(stdout).toMatch(/RUN_COORDINATOR|RunCoordinator/);
      expect(await readdir(outdir)).toContain("index.js");
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });

  it.each(["tsconfig.json", "tsconfig.node.json", "tsconfig.mixed.json", "scripts/k6"])("typechecks %s in strict mode", async (config) => {
    await expect(run(bin("tsc"), ["-p", config], { cwd: PROJECT_ROOT, env })).resolves.toBeDefined();
  });
});
