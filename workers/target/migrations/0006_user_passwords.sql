-- A password for the users who sign in through the target's own sign-in page (GET/POST
-- /login, sign-in-flow.ts), as the browser-login scenario does: stored only as the hex
-- SHA-256 of a per-user salt and the password, as the demo app stores its own (a real
-- provider would use a slow KDF; this is a test target). NULL for users made without one,
-- such as the mail-OTP seed users, who cannot sign in with a password.

ALTER TABLE users ADD COLUMN password_sha256 TEXT;
ALTER TABLE users ADD COLUMN password_salt TEXT;
