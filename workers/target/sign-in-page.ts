/**
 * A sign-in page for k6/browser scripts (test/e2e/browser-script.test.ts, docs/k6.md): the
 * kind of page whose feel under load teams ask about. `GET /app/sign-in` answers an HTML form
 * (email, password, a button); signing in happens in the page, which then says who signed in
 * in `#status`, so a script can fill, click and check a text with no server of its own.
 *
 * `?ms=N` holds the answer N ms first, as the knobs' delay does (knobs.ts): the page's
 * time to first byte, and so its first and largest paints, come N ms later — a slow sign-in
 * page whose LCP threshold fails.
 */
import { Hono } from "hono";

export const signInApp = new Hono();

/** Longest hold a page asks for (ms): a test's slow page, never a stuck one. */
const MAX_HOLD_MS = 30_000;

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in</title>
<style>body{font:16px system-ui;margin:3rem auto;max-width:28rem}label,input,button{display:block;margin:.5rem 0;width:100%}</style></head>
<body>
<h1>Sign in to the edgeload target</h1>
<p>Use any address; the password must not be empty.</p>
<form id="sign-in">
  <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username">
  <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
  <button id="submit" type="submit">Sign in</button>
</form>
<p id="status" role="status"></p>
<script>
document.getElementById("sign-in").addEventListener("submit", (event) => {
  event.preventDefault();
  const email = document.getElementById("email").value;
  const password = document.getElementById("password").value;
  document.getElementById("status").textContent = password ? "Signed in as " + email : "Password required";
});
</script>
</body>
</html>`;

signInApp.get("/sign-in", async (c) => {
  const ms = Math.min(Number(c.req.query("ms") ?? 0) || 0, MAX_HOLD_MS);
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  return c.html(PAGE);
});
