// Applies workers/target/migrations to the target's test D1 before each test file.
import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env } from "cloudflare:workers";

const bindings = env as unknown as { TARGET_DB: D1Database; TEST_MIGRATIONS: D1Migration[] };
await applyD1Migrations(bindings.TARGET_DB, bindings.TEST_MIGRATIONS);
