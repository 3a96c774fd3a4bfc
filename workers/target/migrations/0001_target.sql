-- The Authrim-style target's own database: OAuth clients and users (see workers/target/README.md).

CREATE TABLE clients (
  client_id              TEXT PRIMARY KEY,
  client_secret_sha256   TEXT NOT NULL,          -- hex SHA-256 of the secret; the secret itself is never stored
  client_name            TEXT NOT NULL,
  redirect_uris          TEXT NOT NULL,          -- JSON array
  grant_types            TEXT NOT NULL,          -- JSON array
  scope                  TEXT NOT NULL,
  skip_consent           INTEGER NOT NULL DEFAULT 0,
  token_exchange_allowed INTEGER NOT NULL DEFAULT 0,
  created_at             INTEGER NOT NULL
);

CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  email          TEXT NOT NULL UNIQUE,
  name           TEXT,
  email_verified INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL
);
