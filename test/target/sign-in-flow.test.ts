/**
 * The provider's own pages in the authorization-code flow (workers/target/sign-in-flow.ts),
 * driven over HTTP the way a browser drives them: /authorize → the sign-in form → back to
 * /authorize with a session → the consent screen → the client's redirect page with a code,
 * exchanged at /token. Also: wrong credentials answer the form again, a challenge is used
 * once, the `ms` knob holds the sign-in page, and the client's page shows what it was given.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { admin, BASE, basic, call, newClient, s256Challenge, signingKey, type TestClient } from "./target-calls.ts";

const CALLBACK = `${BASE}/app/callback`;
const VERIFIER = "a-browser-flow-verifier-that-is-long-enough-for-pkce-0123";
const EMAIL = "browser-flow@test.authrim.internal";
const PASSWORD = "correct horse battery";

let consenting: TestClient;
let challenge: string;

beforeAll(async () => {
  challenge = await s256Challenge(VERIFIER);
  await signingKey(); // /token signs with it
  // A client that asks for consent (neither trusted nor skipping it), redirecting to the target's own client page.
  consenting = await newClient({ client_name: "Browser <Flow> App", grant_types: ["authorization_code"] }, CALLBACK);
  const created = await admin("/api/admin/users", { method: "POST", body: JSON.stringify({ email: EMAIL, email_verified: true, password: PASSWORD }) });
  expect(created.status).toBe(201);
});

const authorizePath = (clientId: string, extra: Record<string, string> = {}) =>
  "/authorize?" +
  new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: CALLBACK,
    scope: "openid profile email",
    state: "st-browser",
    nonce: "n-browser",
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...extra,
  });

/** A redirect's Location, relative ones resolved against the target. */
function location(response: Response): URL {
  expect(response.status, `expected a redirect, got ${response.status}`).toBe(302);
  return new URL(response.headers.get("location")!, BASE);
}

const challengeIdOf = (url: URL) => url.searchParams.get("challenge_id")!;

/** A request as a browser's hop: redirects are looked at, not followed. */
const hop = (path: string, init: RequestInit = {}) => call(path, { redirect: "manual", ...init });

const postForm = (path: string, fields: Record<string, string>, cookie?: string) =>
  hop(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams(fields),
  });

/** The sign-in page's challenge id for a fresh /authorize of `clientId`. */
async function signInChallenge(clientId: string, extra: Record<string, string> = {}): Promise<URL> {
  const toLogin = location(await hop(authorizePath(clientId, extra)));
  expect(toLogin.pathname).toBe("/login");
  return toLogin;
}

/** Signs in on a fresh challenge: the session cookie and where the browser is sent next. */
async function signIn(clientId: string): Promise<{ cookie: string; next: URL }> {
  const id = challengeIdOf(await signInChallenge(clientId));
  const answer = await postForm("/login", { challenge_id: id, username: EMAIL, password: PASSWORD });
  const cookie = /^(authrim_session=[^;]+)/.exec(answer.headers.get("set-cookie") ?? "")?.[1];
  expect(cookie, "a session cookie").toBeTruthy();
  return { cookie: cookie!, next: location(answer) };
}

describe("the sign-in form", () => {
  it("is where /authorize sends a browser without a session: a form that posts email, password and the challenge", async () => {
    const toLogin = await signInChallenge(consenting.client_id);
    const page = await hop(toLogin.pathname + toLogin.search);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<form method="post" action="/login">');
    expect(html).toContain(`name="challenge_id" value="${challengeIdOf(toLogin)}"`);
    expect(html).toMatch(/<input id="username" name="username"/);
    expect(html).toMatch(/<input id="password" name="password" type="password"/);
    expect(html).toContain('<button id="submit" type="submit">');
    // The client's name, escaped; the address cleaned of the one-time id as the page loads.
    expect(html).toContain("Browser &lt;Flow&gt; App");
    expect(html).toContain('history.replaceState(null, "", location.pathname)');
  });

  it("answers wrong credentials with the form again (401, an error, the email kept), and the challenge still works after", async () => {
    const id = challengeIdOf(await signInChallenge(consenting.client_id));
    for (const [username, password] of [
      [EMAIL, "not the password"], // a wrong password
      ["nobody@test.authrim.internal", PASSWORD], // an unknown user
    ] as const) {
      const wrong = await postForm("/login", { challenge_id: id, username, password });
      expect(wrong.status, username).toBe(401);
      expect(wrong.headers.get("set-cookie")).toBeNull();
      const html = await wrong.text();
      expect(html).toContain('<p id="error" class="error" role="alert">Wrong email or password.</p>');
      expect(html).toContain(`value="${username}"`);
      expect(html).toContain(`name="challenge_id" value="${id}"`);
    }
    const right = await postForm("/login", { challenge_id: id, username: EMAIL, password: PASSWORD });
    expect(location(right).pathname).toBe("/authorize");
  });

  it("refuses a user made without a password, however it is typed", async () => {
    await admin("/api/admin/users", { method: "POST", body: JSON.stringify({ email: "otp-only@test.authrim.internal", email_verified: true }) });
    const id = challengeIdOf(await signInChallenge(consenting.client_id));
    expect((await postForm("/login", { challenge_id: id, username: "otp-only@test.authrim.internal", password: "" })).status).toBe(401);
    expect((await postForm("/login", { challenge_id: id, username: "otp-only@test.authrim.internal", password: "anything-at-all" })).status).toBe(401);
  });

  it("uses a challenge once, and answers a missing or unknown one 400 as Authrim's built-in forms do", async () => {
    const id = challengeIdOf(await signInChallenge(consenting.client_id));
    expect((await postForm("/login", { challenge_id: id, username: EMAIL, password: PASSWORD })).status).toBe(302);
    const again = await postForm("/login", { challenge_id: id, username: EMAIL, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ error: "invalid_request", error_description: "Invalid or expired challenge" });
    expect((await hop(`/login?challenge_id=${id}`)).status).toBe(400);
    expect(await (await hop("/login")).json()).toEqual({ error: "invalid_request", error_description: "Missing challenge_id parameter" });
  });

  it("is held by the `ms` knob, passed on from /authorize; a bad value is refused naming it", async () => {
    const toLogin = await signInChallenge(consenting.client_id, { ms: "300" });
    expect(toLogin.searchParams.get("ms")).toBe("300");
    const startedMs = Date.now();
    const page = await hop(toLogin.pathname + toLogin.search);
    expect(page.status).toBe(200);
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(300);
    const bad = await hop(`/login?challenge_id=${challengeIdOf(toLogin)}&ms=soon`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error_description: string }).error_description).toBe('ms must be a number of milliseconds from 0 to 30000, got "soon"');
  });
});

describe("after signing in", () => {
  it("goes back to /authorize with the session, then the consent screen, then the client with a code that /token exchanges", async () => {
    const { cookie, next } = await signIn(consenting.client_id);
    // Back to the original request, as Authrim's built-in sign-in does.
    expect(next.searchParams.get("state")).toBe("st-browser");
    expect(next.searchParams.get("client_id")).toBe(consenting.client_id);
    const toConsent = location(await hop(next.pathname + next.search, { headers: { cookie } }));
    expect(toConsent.pathname).toBe("/consent");
    const screen = await hop(toConsent.pathname + toConsent.search);
    expect(screen.status).toBe(200);
    const html = await screen.text();
    expect(html).toContain('<li data-scope="email">See your email address</li>');
    expect(html).toContain('<input type="hidden" name="approved" value="true">');
    expect(html).toContain('<button type="submit" class="approve">Approve</button>');
    expect(html).toContain('<button type="submit" class="deny">Deny</button>');

    const back = location(await postForm("/consent", { challenge_id: challengeIdOf(toConsent), approved: "true" }));
    expect(back.origin + back.pathname).toBe(CALLBACK);
    expect(back.searchParams.get("state")).toBe("st-browser");
    const code = back.searchParams.get("code")!;
    expect(code).toMatch(/^[0-9a-f]{48}$/);
    const tokens = await call("/token", {
      method: "POST",
      headers: { authorization: basic(consenting.client_id, consenting.client_secret) },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, code_verifier: VERIFIER }),
    });
    expect(tokens.status).toBe(200);
    const { access_token } = (await tokens.json()) as { access_token: string };
    const me = await call("/userinfo", { headers: { authorization: `Bearer ${access_token}` } });
    expect(((await me.json()) as { email: string }).email).toBe(EMAIL);
    // The consent challenge is used up with its answer.
    expect((await postForm("/consent", { challenge_id: challengeIdOf(toConsent), approved: "true" })).status).toBe(400);
  });

  it("sends a denied consent back to the client with error=access_denied and the state", async () => {
    const { cookie, next } = await signIn(consenting.client_id);
    const toConsent = location(await hop(next.pathname + next.search, { headers: { cookie } }));
    const back = location(await postForm("/consent", { challenge_id: challengeIdOf(toConsent), approved: "false" }));
    expect(back.origin + back.pathname).toBe(CALLBACK);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: "access_denied",
      error_description: "User denied the consent request",
      state: "st-browser",
    });
  });

  it("skips the consent screen for a trusted client that skips consent: the code comes straight back", async () => {
    const trusted = await newClient({ is_trusted: true, skip_consent: true }, CALLBACK);
    const { cookie, next } = await signIn(trusted.client_id);
    const back = location(await hop(next.pathname + next.search, { headers: { cookie } }));
    expect(back.origin + back.pathname).toBe(CALLBACK);
    expect(back.searchParams.get("code")).toBeTruthy();
  });
});

describe("the client's redirect page", () => {
  it("shows the code and state it was given, escaped, and takes them out of its address", async () => {
    const page = await hop("/app/callback?code=abc123&state=%3Cst%3E");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<output id="code">abc123</output>');
    expect(html).toContain('<output id="state">&lt;st&gt;</output>');
    expect(html).toContain("history.replaceState");
  });

  it("shows an error instead of a code", async () => {
    const html = await (await hop("/app/callback?error=access_denied&state=s")).text();
    expect(html).toContain('<output id="error">access_denied</output>');
    expect(html).not.toContain('id="code"');
  });
});

describe("users with passwords", () => {
  it("refuses a password that is too short or not a string, naming it", async () => {
    for (const password of ["short", 12345678]) {
      const answer = await admin("/api/admin/users", {
        method: "POST",
        body: JSON.stringify({ email: `pw-${String(password)}@test.authrim.internal`, password }),
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error_description: string }).error_description).toBe("password must be a string of 8 to 256 characters");
    }
  });
});
