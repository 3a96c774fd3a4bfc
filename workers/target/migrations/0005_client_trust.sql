-- What Authrim keeps on a client's row beside consent and token exchange (its oauth_clients
-- table): whether the client is trusted (with skip_consent, silent authentication asks no
-- consent; otherwise prompt=none answers error=consent_required) and which clients' subject
-- tokens it may exchange when it is not in their `aud` (otherwise 403 invalid_target).

ALTER TABLE clients ADD COLUMN is_trusted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE clients ADD COLUMN allowed_subject_token_clients TEXT; -- JSON array of client ids, NULL for none
