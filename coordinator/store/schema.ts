/**
 * The results database brings itself up to date, so that `wrangler deploy` alone gives a
 * working deployment: the first request an isolate serves applies every migration of
 * coordinator/migrations that `d1_migrations` does not list yet.
 *
 * It is wrangler's own bookkeeping: the same `d1_migrations` table, the same names (file
 * names), one migration and its record in one transaction (a D1 batch). So a database
 * migrated by `wrangler d1 migrations apply`, by this module, or by both in either order
 * ends in the same state, and neither applies a migration twice.
 *
 * Two isolates may race on a fresh database. The loser's batch fails (a table that now
 * exists, a column already added, or the UNIQUE name in `d1_migrations`) and rolls back
 * whole; it then finds the migration recorded and goes on. A failure that leaves the
 * migration unrecorded is a real one and is reported with the migration's name.
 */
import results from "../migrations/0001_results.sql";
import customMetrics from "../migrations/0002_custom_metrics.sql";
import shardHistograms from "../migrations/0003_shard_histograms.sql";
import baselines from "../migrations/0004_baselines.sql";
import k6Imports from "../migrations/0005_k6_imports.sql";
import series from "../migrations/0006_series.sql";
import settings from "../migrations/0007_settings.sql";
import schedules from "../migrations/0008_schedules.sql";
import verifiedTargets from "../migrations/0009_verified_targets.sql";
import alertOutbox from "../migrations/0010_alert_outbox.sql";
import viewLinks from "../migrations/0011_view_links.sql";
import retention from "../migrations/0012_retention.sql";
import runLeftovers from "../migrations/0013_run_leftovers.sql";
import { splitSql } from "./sql-split.ts";

export interface Migration {
  /** The file name, as wrangler records it in `d1_migrations`. */
  readonly name: string;
  readonly sql: string;
}

/** Every migration, in the order wrangler applies them (file names sorted). */
export const MIGRATIONS: readonly Migration[] = [
  { name: "0001_results.sql", sql: results },
  { name: "0002_custom_metrics.sql", sql: customMetrics },
  { name: "0003_shard_histograms.sql", sql: shardHistograms },
  { name: "0004_baselines.sql", sql: baselines },
  { name: "0005_k6_imports.sql", sql: k6Imports },
  { name: "0006_series.sql", sql: series },
  { name: "0007_settings.sql", sql: settings },
  { name: "0008_schedules.sql", sql: schedules },
  { name: "0009_verified_targets.sql", sql: verifiedTargets },
  { name: "0010_alert_outbox.sql", sql: alertOutbox },
  { name: "0011_view_links.sql", sql: viewLinks },
  { name: "0012_retention.sql", sql: retention },
  { name: "0013_run_leftovers.sql", sql: runLeftovers },
];

/** wrangler's statement, so whichever of the two creates the table creates the same one. */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS d1_migrations(
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

export class SchemaError extends Error {
  readonly migration: string;
  constructor(migration: string, cause: unknown) {
    super(`D1 migration ${migration} could not be applied: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.migration = migration;
  }
}

/** One check per isolate and database: later requests wait on the same promise. */
const ready = new WeakMap<D1Database, Promise<void>>();

/** Resolves once every migration is applied; a failed attempt is retried by the next caller. */
export function ensureSchema(db: D1Database): Promise<void> {
  let done = ready.get(db);
  if (!done) {
    done = applyMigrations(db).catch((error: unknown) => {
      ready.delete(db);
      throw error;
    });
    ready.set(db, done);
  }
  return done;
}

/** Applies what is missing, unconditionally (ensureSchema remembers that it was done). */
export async function applyMigrations(db: D1Database): Promise<void> {
  await db.prepare(CREATE_MIGRATIONS_TABLE).run();
  const applied = new Set((await db.prepare("SELECT name FROM d1_migrations").all<{ name: string }>()).results.map((r) => r.name));
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.name)) continue;
    try {
      await db.batch([...splitSql(migration.sql).map((s) => db.prepare(s)), db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(migration.name)]);
    } catch (error) {
      const recorded = await db.prepare("SELECT 1 AS yes FROM d1_migrations WHERE name = ?").bind(migration.name).first();
      if (!recorded) throw new SchemaError(migration.name, error);
    }
  }
}
