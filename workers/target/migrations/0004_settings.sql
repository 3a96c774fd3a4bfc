-- Introspection settings set through the admin API, as Authrim keeps them
-- (workers/target/introspection-settings.ts): strict validation, the positive-answer cache.
CREATE TABLE settings (
  name   TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
