/**
 * The project builds as a user deploys it: `wrangler deploy --dry-run` bundles the
 * coordinator Worker, `edgeload deploy --dry-run` checks both Workers and their configs,
 * `edgeload plan` prices a run before any load, and both TypeScript programs (Workers and
 * Node) typecheck strictly.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";
import { runCli } from "./cli-process.ts";

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

  it("edgeload deploy --dry-run builds both Workers, checks their configs and lists the deploy's commands", async () => {
    const r = await runCli(["deploy", "--dry-run", "--with-target"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Worker edgeload \(wrangler\.toml\): \d+ KiB, \d+ KiB compressed/);
    expect(r.stdout).toMatch(/Worker edgeload-target \(workers\/target\/wrangler\.toml\)/);
    expect(r.stdout).toContain("Durable Object LoadShard as LOAD_SHARD (SQLite storage)");
    expect(r.stdout).toContain("D1 edgeload-results as DB (created by wrangler on the first deploy)");
    // A deploy is `wrangler deploy` and nothing else; the config needs no edit first.
    expect(r.stdout).toMatch(
      /`edgeload deploy` runs:\n {2}npx wrangler deploy --config wrangler\.toml\n {2}npx wrangler deploy --config workers\/target\/wrangler\.toml$/m,
    );
    expect(r.stdout).not.toMatch(/^\s*(error|warning):/m);
  });

  it("edgeload plan prices the 35,000/s example within every limit, and refuses it over a budget", async () => {
    const ok = await runCli(["plan", "examples/edge-35k.json"], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("shards: 252 (wnam 42, enam 42, weur 42, eeur 42, apac 42, oc 42)");
    expect(ok.stdout).not.toContain("OVER");
    const over = await runCli(["plan", "examples/edge-35k.json", "--max-cost", "0.05"], env);
    expect(over.code).toBe(104);
    expect(over.stderr).toMatch(/maxCost: the run's estimated cost is \$0\.\d+ .*above its budget of \$0\.050/);
  });

  it.each(["tsconfig.json", "tsconfig.node.json", "tsconfig.mixed.json", "k6-scripts", "dashboard"])("typechecks %s in strict mode", async (config) => {
    // tsc exits non-zero (run rejects) on an error, and prints nothing when there is none.
    const { stdout } = await run(bin("tsc"), ["-p", config], { cwd: PROJECT_ROOT, env });
    expect(stdout).toBe("");
  });
});
