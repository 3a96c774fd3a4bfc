-- The records API under /app/v1/records and /app/v2/records (workers/target/records.ts):
-- key/value records for the CRUD load test with hot keys. Both API builds share this
-- table. Nothing existing changes.

CREATE TABLE app_records (
  key        TEXT PRIMARY KEY,           -- 1 to 128 characters of A-Za-z0-9 _ . : -
  value      TEXT NOT NULL,              -- JSON text of the value
  version    INTEGER NOT NULL,           -- 1 on create, +1 on each write that changes it
  updated_at INTEGER NOT NULL            -- epoch ms of the last write
) WITHOUT ROWID;                         -- looked up by key only: the key is the storage order
