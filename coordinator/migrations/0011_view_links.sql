-- Dashboard view links are single-use (coordinator/http/view-grant.ts): the nonce of each
-- link traded for a session, kept until the link would have expired anyway.
CREATE TABLE spent_view_links (
  nonce            TEXT PRIMARY KEY,
  expires_at       INTEGER NOT NULL          -- unix seconds: the link's own expiry
);
