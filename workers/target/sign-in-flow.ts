/**
 * The provider's own pages in the authorization-code flow, where `/authorize` (login.ts)
 * sends a browser: the sign-in form and the consent screen (their HTML: flow-pages.ts).
 * They are what the browser-login scenario (k6-scripts/browser-login.js) measures in
 * Chromium, and what its protocol-level cousins skip.
 *
 *   GET  /login?challenge_id=…[&ms=N]   the sign-in form; `ms` holds the answer N ms first
 *                                       (at most 30 s), as the knobs' delay does (knobs.ts),
 *                                       so the page's first byte and paints come later
 *   POST /login                         email + password: a session cookie and 302 back to
 *                                       /authorize with the original request (as Authrim);
 *                                       wrong ones answer the form again, 401, with an error
 *   GET  /consent?challenge_id=…        the consent screen
 *   POST /consent                       approved=true: 302 to the client with a code;
 *                                       otherwise with error=access_denied
 *
 * A challenge that is missing, unknown, expired or used answers 400 as Authrim's built-in
 * forms do. Users sign in with the password they were created with (POST /api/admin/users).
 */
import { type Context, Hono } from "hono";
import { userByPassword } from "./directory.ts";
import { featureSettings } from "./feature-settings.ts";
import { consentPage, signInPage } from "./flow-pages.ts";
import { createSession, SESSION_COOKIE } from "./login.ts";
import { issueCode, readChallenge, redirect, withParams } from "./pending-authorization.ts";
import { authStore, type TargetEnv } from "./target-env.ts";

type App = { Bindings: TargetEnv };
export const signInFlowApp = new Hono<App>();

/** Longest hold the sign-in page takes (ms): a test's slow page, never a stuck one. */
export const MAX_HOLD_MS = 30_000;
/** A login session lasts an hour, as Authrim's built-in sign-in makes it. */
const SESSION_TTL_S = 3600;

const invalidRequest = (c: Context<App>, description: string) => c.json({ error: "invalid_request", error_description: description }, 400);
const missingChallenge = (c: Context<App>) => invalidRequest(c, "Missing challenge_id parameter");
const invalidChallenge = (c: Context<App>) => invalidRequest(c, "Invalid or expired challenge");

/** A form's text field, "" when absent. */
async function formFields(c: Context<App>): Promise<(name: string) => string> {
  const form = await c.req.parseBody();
  return (name) => {
    const value = form[name];
    return typeof value === "string" ? value : "";
  };
}

signInFlowApp.get("/login", async (c) => {
  const id = c.req.query("challenge_id");
  if (!id) return missingChallenge(c);
  const rawHold = c.req.query("ms");
  const holdMs = rawHold === undefined ? 0 : Number(rawHold);
  if (!Number.isFinite(holdMs) || holdMs < 0 || holdMs > MAX_HOLD_MS)
    return invalidRequest(c, `ms must be a number of milliseconds from 0 to ${MAX_HOLD_MS}, got "${rawHold}"`);
  // Held before anything else, so the whole answer (its first byte included) comes late.
  if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
  const challenge = await readChallenge(authStore(c.env), id, "login");
  if (!challenge) return invalidChallenge(c);
  return c.html(signInPage({ challengeId: id, clientName: challenge.client_name, username: "", error: null }), 200, { "cache-control": "no-store" });
});

signInFlowApp.post("/login", async (c) => {
  const field = await formFields(c);
  const id = field("challenge_id");
  if (!id) return missingChallenge(c);
  const store = authStore(c.env);
  const challenge = await readChallenge(store, id, "login");
  if (!challenge) return invalidChallenge(c);
  const username = field("username");
  const user = await userByPassword(c.env.TARGET_DB, username, field("password"));
  if (!user) {
    const view = { challengeId: id, clientName: challenge.client_name, username, error: "Wrong email or password." };
    return c.html(signInPage(view), 401, { "cache-control": "no-store" });
  }
  // Taken only now, so a wrong password leaves the challenge for the next try; a second
  // sign-in with the same one (another tab) finds it used.
  if (!(await readChallenge(store, id, "login", true))) return invalidChallenge(c);
  const session = await createSession(store, user.id, SESSION_TTL_S);
  // Set raw, as Authrim's built-in sign-in sets it, since /authorize reads it raw (login.ts);
  // Secure only over https, or a browser on the plain-http local target would drop it.
  const secure = new URL(c.req.url).protocol === "https:" ? "; Secure" : "";
  return redirect(`/authorize${challenge.query}`, {
    "set-cookie": `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_S}${secure}`,
  });
});

signInFlowApp.get("/consent", async (c) => {
  const id = c.req.query("challenge_id");
  if (!id) return missingChallenge(c);
  const challenge = await readChallenge(authStore(c.env), id, "consent");
  if (!challenge) return invalidChallenge(c);
  return c.html(consentPage({ challengeId: id, clientName: challenge.client_name, scope: challenge.request.scope }), 200, { "cache-control": "no-store" });
});

/**
 * The consent answer. Authrim records an approval and sends the browser through /authorize
 * once more; this target keeps no consent records (login.ts), so it issues the code here.
 */
signInFlowApp.post("/consent", async (c) => {
  const field = await formFields(c);
  const id = field("challenge_id");
  if (!id) return missingChallenge(c);
  const store = authStore(c.env);
  const challenge = await readChallenge(store, id, "consent", true);
  if (!challenge) return invalidChallenge(c);
  const { request } = challenge;
  if (field("approved") !== "true") {
    return redirect(withParams(request.redirect_uri, { error: "access_denied", error_description: "User denied the consent request", state: request.state }));
  }
  const { oauthConfig } = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  return issueCode(store, oauthConfig.MAX_CODES_PER_USER, request, challenge.user_id);
});
