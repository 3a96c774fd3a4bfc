-- The demo app under /app (workers/target/demo-app.ts): accounts and login tokens for the
-- closed-model examples (examples/auth-user-lifecycle.json). Separate from the OIDC
-- provider's users: nothing existing changes.

CREATE TABLE app_users (
  username        TEXT PRIMARY KEY,
  email           TEXT NOT NULL UNIQUE,
  password_sha256 TEXT NOT NULL,          -- hex SHA-256 of salt ‖ password; never the password
  salt            TEXT NOT NULL,
  created_at      INTEGER NOT NULL
);

CREATE TABLE app_tokens (
  token_sha256 TEXT PRIMARY KEY,          -- hex SHA-256 of the bearer token; never the token
  username     TEXT NOT NULL REFERENCES app_users(username),
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER                    -- set by DELETE /app/logout; a revoked token answers 401
);

CREATE INDEX app_tokens_by_user ON app_tokens (username);
