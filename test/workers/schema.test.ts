/**
 * The results database brings itself up to date (coordinator/store/schema.ts) and stays
 * interchangeable with wrangler's migrations: applied by either, in either order, or by
 * both at once, it ends in the same schema with each migration recorded once. (The
 * vitest plugin's applyD1Migrations keeps the same `d1_migrations` table as
 * `wrangler d1 migrations apply`; test/e2e/deploy.test.ts runs wrangler's own command.)
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { applyMigrations, MIGRATIONS } from "../../coordinator/store/schema.ts";
import { api, createRun, waitForStatus } from "./helpers.ts";

/** Tables, views and indexes with their SQL, comments and spacing aside. */
async function schemaOf(db: D1Database): Promise<string[]> {
  const rows = await db
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY type, name",
    )
    .all<{ type: string; name: string; sql: string | null }>();
  return rows.results.map(
    (r) =>
      `${r.type} ${r.name}: ${(r.sql ?? "")
        .replace(/--[^\n]*/g, "")
        .replace(/\s+/g, " ")
        .replace(/\( /g, "(")
        .replace(/ \)/g, ")")
        .trim()}`,
  );
}

async function recorded(db: D1Database): Promise<string[]> {
  return (await db.prepare("SELECT name FROM d1_migrations ORDER BY id").all<{ name: string }>()).results.map((r) => r.name);
}

/** An empty database, as a fresh deployment's. */
async function dropEverything(db: D1Database): Promise<void> {
  const objects = await db
    .prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND type IN ('table', 'view')")
    .all<{ type: string; name: string }>();
  const views = objects.results.filter((o) => o.type === "view").map((o) => db.prepare(`DROP VIEW "${o.name}"`));
  const tables = objects.results.filter((o) => o.type === "table").map((o) => db.prepare(`DROP TABLE "${o.name}"`));
  if (views.length + tables.length) await db.batch([...views, ...tables]);
}

const ALL = MIGRATIONS.map((m) => m.name);
let wranglerSchema: string[];

beforeEach(async () => {
  // The setup file applied every migration the plugin's (wrangler's) way.
  wranglerSchema ??= await schemaOf(env.DB);
  await dropEverything(env.DB);
});

describe("the results schema", () => {
  it("embeds every migration of coordinator/migrations, in wrangler's order", () => {
    expect(ALL).toEqual(env.TEST_MIGRATIONS.map((m) => m.name));
  });

  it("is applied by the coordinator on a fresh database, then left alone by wrangler's migrations", async () => {
    await applyMigrations(env.DB);
    expect(await schemaOf(env.DB)).toEqual(wranglerSchema);
    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
    expect(await recorded(env.DB)).toEqual(ALL);
  });

  it("picks up where wrangler's migrations left off, without applying one twice", async () => {
    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS.slice(0, 3));
    await applyMigrations(env.DB);
    await applyMigrations(env.DB);
    expect(await recorded(env.DB)).toEqual(ALL);
    expect(await schemaOf(env.DB)).toEqual(wranglerSchema);
  });

  it("survives two isolates migrating the same fresh database at once", async () => {
    await Promise.all([applyMigrations(env.DB), applyMigrations(env.DB), applyMigrations(env.DB)]);
    expect(await recorded(env.DB)).toEqual(ALL);
    expect(await schemaOf(env.DB)).toEqual(wranglerSchema);
  });

  it("serves a run on a database that has the schema from either path", async () => {
    await applyMigrations(env.DB);
    const { id } = await createRun({ duration: "1s", rate: 10 });
    expect((await waitForStatus(id)).status).toBe("passed");
    expect((await api(`/v1/runs/${id}/summary`)).status).toBe(200);
  });
});
