/**
 * The deploy checks on wrangler.toml: the project's own config passes as it is (a fresh
 * clone deploys with no edit); each kind of inconsistency is named by its field.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deployCommands, sizeProblems } from "./deploy-command.ts";
import { DEFAULT_LIMITS } from "../core/plan/plan.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { checkWranglerConfig, exportedNames, limitsFromConfig, readWranglerConfig, type WranglerConfig } from "./wrangler-config.ts";

const project = readWranglerConfig(join(PROJECT_ROOT, "wrangler.toml"));
const onDisk = (relative: string) => existsSync(join(PROJECT_ROOT, relative));
const sqlIn = (relative: string) => readdirSync(join(PROJECT_ROOT, relative)).filter((f) => f.endsWith(".sql"));
const check = (config: WranglerConfig, exported = ["RunCoordinator", "LoadShard", "RunAggregator", "ScheduleVault"]) =>
  checkWranglerConfig(config, exported, onDisk, sqlIn);

describe("checkWranglerConfig", () => {
  it("passes the project's wrangler.toml with nothing to fix: no ids to fill in, no var to edit", () => {
    expect(check(project)).toEqual([]);
    expect(project.d1_databases!.every((d) => d.database_id === undefined)).toBe(true);
  });

  it("warns when a setting that belongs in a secret sits in [vars]", () => {
    const problems = check({ ...project, vars: { ...project.vars, ALLOWED_TARGETS: "https://a.example" } });
    expect(problems).toEqual([
      expect.objectContaining({
        severity: "warning",
        field: "vars.ALLOWED_TARGETS",
        detail: expect.stringContaining("npx wrangler secret put ALLOWED_TARGETS"),
      }),
    ]);
  });

  it.each([
    // [change, field named, why]
    [{ exported: ["RunCoordinator"] }, "durable_objects.bindings.1", "LoadShard is not exported by the bundle"],
    [{ config: { migrations: [{ tag: "v1", new_sqlite_classes: ["RunCoordinator"] }] } }, "durable_objects.bindings.1", "no migration creates LoadShard"],
    [
      { config: { migrations: [{ tag: "v1", new_sqlite_classes: ["RunCoordinator"], new_classes: ["LoadShard"] }] } },
      "durable_objects.bindings.1",
      "LoadShard made with key-value storage",
    ],
    [{ config: { migrations: [{ tag: "v1", new_sqlite_classes: ["RunCoordinator", "LoadShard"] }, { tag: "v1" }] } }, "migrations.1.tag", "a tag used twice"],
    [
      { config: { d1_databases: [{ binding: "DB", database_name: "x", database_id: "abc", migrations_dir: "nowhere" }] } },
      "d1_databases.0.migrations_dir",
      "missing migrations folder",
    ],
    [
      { config: { d1_databases: [{ binding: "DB", database_name: "x", database_id: "abc", migrations_dir: "core" }] } },
      "d1_databases.0.migrations_dir",
      "a folder without .sql files",
    ],
    [{ config: { main: "coordinator/nope.ts" } }, "main", "entry module missing"],
    [{ config: { vars: { ...project.vars, MAX_SHARDS: "lots" } } }, "vars.MAX_SHARDS", "a cap that is not a number"],
    [
      { config: { vars: { ...project.vars, SUBREQUESTS_PER_INVOCATION: "20000" } } },
      "vars.SUBREQUESTS_PER_INVOCATION",
      "shards would plan more subrequests than limits.subrequests",
    ],
    [{ config: { limits: { cpu_ms: 900_000 } } }, "limits.cpu_ms", "over 5 minutes"],
    [{ config: { r2_buckets: [{ binding: "SEEDS", bucket_name: "Edgeload_Seeds" }] } }, "r2_buckets.0.bucket_name", "not a valid bucket name"],
    [
      {
        config: {
          d1_databases: [{ binding: "DB", database_name: "x", database_id: "00000000-0000-0000-0000-000000000000", migrations_dir: "coordinator/migrations" }],
        },
      },
      "d1_databases.0.database_id",
      "a placeholder id, which a deploy would try to bind",
    ],
  ])("%j → error at %s (%s)", (change, field, _why) => {
    const c = change as { config?: Partial<WranglerConfig>; exported?: string[] };
    const problems = check({ ...project, ...c.config }, c.exported);
    expect(problems.filter((p) => p.severity === "error").map((p) => p.field)).toContain(field);
  });
});

describe("deploy helpers", () => {
  it("reads the classes a bundle exports", () => {
    expect(exportedNames("var a=1;\nexport {\n  RunCoordinator,\n  LoadShard as LoadShard,\n  index_default as default\n};")).toEqual([
      "RunCoordinator",
      "LoadShard",
      "default",
    ]);
    expect(exportedNames("export class Foo {}")).toEqual(["Foo"]);
  });

  it("deploys with wrangler deploy alone: resources are provisioned by wrangler, the schema by the coordinator", () => {
    expect(deployCommands(project, join(PROJECT_ROOT, "wrangler.toml")).map((c) => c.slice(2).join(" "))).toEqual(["deploy --config wrangler.toml"]);
  });

  it.each([
    // [raw bytes, severities]: 64 MiB uncompressed on every plan, no compressed limit since 2026-09-04
    [2 * 2 ** 20, []],
    [30 * 2 ** 20, []],
    [64 * 2 ** 20, []],
    [70 * 2 ** 20, ["error"]],
  ])("a bundle of %d bytes → %j", (raw, severities) => {
    expect(sizeProblems(raw).map((p) => p.severity)).toEqual(severities);
  });

  it("takes the deployment's caps from its vars, and the defaults the coordinator uses without them", () => {
    expect(limitsFromConfig({ vars: { MAX_RATE_PER_S: "1000" } }).maxRatePerS).toBe(1000);
    expect(limitsFromConfig(project)).toEqual(DEFAULT_LIMITS);
  });
});
