/**
 * The deploy checks on wrangler.toml: the project's own config passes with only the
 * warnings a fresh clone must act on; each kind of inconsistency is named by its field.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deployCommands, sizeProblems } from "./deploy-command.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { checkWranglerConfig, exportedNames, limitsFromConfig, readWranglerConfig, type WranglerConfig } from "./wrangler-config.ts";

const project = readWranglerConfig(join(PROJECT_ROOT, "wrangler.toml"));
const onDisk = (relative: string) => existsSync(join(PROJECT_ROOT, relative));
const sqlIn = (relative: string) => readdirSync(join(PROJECT_ROOT, relative)).filter((f) => f.endsWith(".sql"));
const check = (config: WranglerConfig, exported = ["RunCoordinator", "LoadShard"]) => checkWranglerConfig(config, exported, onDisk, sqlIn);

describe("checkWranglerConfig", () => {
  it("passes the project's wrangler.toml, warning about the placeholder D1 id and the empty allow-list", () => {
    const problems = check(project);
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(problems.map((p) => p.field).sort()).toEqual(["d1_databases.0.database_id", "vars.ALLOWED_TARGETS"]);
  });

  it.each([
    // [change, field named, why]
    [{ exported: ["RunCoordinator"] }, "durable_objects.bindings.1", "LoadShard is not exported by the bundle"],
    [{ config: { migrations: [{ tag: "v1", new_sqlite_classes: ["RunCoordinator"] }] } }, "durable_objects.bindings.1", "no migration creates LoadShard"],
    [{ config: { migrations: [{ tag: "v1", new_sqlite_classes: ["RunCoordinator"], new_classes: ["LoadShard"] }] } }, "durable_objects.bindings.1", "LoadShard made with key-value storage"],
    [{ config: { migrations: [{ tag: "v1", new_sqlite_classes: ["RunCoordinator", "LoadShard"] }, { tag: "v1" }] } }, "migrations.1.tag", "a tag used twice"],
    [{ config: { d1_databases: [{ binding: "DB", database_name: "x", database_id: "abc", migrations_dir: "nowhere" }] } }, "d1_databases.0.migrations_dir", "missing migrations folder"],
    [{ config: { d1_databases: [{ binding: "DB", database_name: "x", database_id: "abc", migrations_dir: "core" }] } }, "d1_databases.0.migrations_dir", "a folder without .sql files"],
    [{ config: { main: "coordinator/nope.ts" } }, "main", "entry module missing"],
    [{ config: { vars: { ...project.vars, MAX_SHARDS: "lots" } } }, "vars.MAX_SHARDS", "a cap that is not a number"],
    [{ config: { vars: { ...project.vars, SUBREQUESTS_PER_INVOCATION: "20000" } } }, "vars.SUBREQUESTS_PER_INVOCATION", "shards would plan more subrequests than limits.subrequests"],
    [{ config: { limits: { cpu_ms: 900_000 } } }, "limits.cpu_ms", "over 5 minutes"],
    [{ config: { r2_buckets: [{ binding: "SEEDS", bucket_name: "Edgeload_Seeds" }] } }, "r2_buckets.0.bucket_name", "not a valid bucket name"],
  ])("%j → error at %s (%s)", (change, field, _why) => {
    const c = change as { config?: Partial<WranglerConfig>; exported?: string[] };
    const problems = check({ ...project, ...c.config }, c.exported);
    expect(problems.filter((p) => p.severity === "error").map((p) => p.field)).toContain(field);
  });
});

describe("deploy helpers", () => {
  it("reads the classes a bundle exports", () => {
    expect(exportedNames('var a=1;\nexport {\n  RunCoordinator,\n  LoadShard as LoadShard,\n  index_default as default\n};')).toEqual(["RunCoordinator", "LoadShard", "default"]);
    expect(exportedNames("export class Foo {}")).toEqual(["Foo"]);
  });

  it("creates the bucket, deploys, then applies the D1 migrations remotely, in that order", () => {
    expect(deployCommands(project, join(PROJECT_ROOT, "wrangler.toml")).map((c) => c.slice(2).join(" "))).toEqual([
      "r2 bucket create edgeload-seeds",
      "deploy --config wrangler.toml",
      "d1 migrations apply edgeload-results --remote --config wrangler.toml",
    ]);
  });

  it.each([
    // [raw bytes, gzip bytes, severities]
    [2 * 2 ** 20, 1 * 2 ** 20, []],
    [8 * 2 ** 20, 4 * 2 ** 20, ["warning"]],
    [30 * 2 ** 20, 11 * 2 ** 20, ["error"]],
    [70 * 2 ** 20, 9 * 2 ** 20, ["warning", "error"]],
  ])("a bundle of %d bytes (%d compressed) → %j", (raw, gzip, severities) => {
    expect(sizeProblems(raw, gzip).map((p) => p.severity)).toEqual(severities);
  });

  it("takes the deployment's caps from its vars", () => {
    expect(limitsFromConfig(project).maxRatePerS).toBe(Number(project.vars!.MAX_RATE_PER_S));
    expect(limitsFromConfig({}).maxShards).toBe(256);
  });
});
