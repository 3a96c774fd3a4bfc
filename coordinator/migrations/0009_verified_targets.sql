-- Proof of target ownership (issue 48), documented in SCHEMA.md: one row per host a check
-- has looked at. A deployed coordinator loads a host only while its row holds a proof that
-- has not expired (core/spec/target-ownership.ts); an expired one is checked again when a
-- run against the host is admitted, and a check that finds nothing clears the proof.
CREATE TABLE verified_targets (
  host             TEXT PRIMARY KEY,         -- lower case, no port (core/spec/target-ownership.ts parseOwnershipHost)
  method           TEXT,                     -- dns | well-known; NULL: the last check found no proof
  verified_at      INTEGER,                  -- epoch ms of the check that found the proof; NULL: not verified
  expires_at       INTEGER,                  -- verified_at + 7 days; from then the next run re-checks
  checked_at       INTEGER NOT NULL,         -- epoch ms of the last check, whatever it found
  detail           TEXT NOT NULL             -- what the last check found, in words
);
