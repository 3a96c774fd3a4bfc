-- Settings a deployment keeps across redeploys and secret rotations, documented in
-- SCHEMA.md. Today one row: the generated seed-URL signing key (`seed_url_key`), made on
-- first use when the SEED_URL_KEY secret is unset, so rotating EDGELOAD_API_TOKEN leaves
-- every TOKEN_URL already handed to k6 valid.
CREATE TABLE settings (
  name             TEXT PRIMARY KEY,
  value            TEXT NOT NULL,
  created_at       INTEGER NOT NULL          -- epoch ms
);
