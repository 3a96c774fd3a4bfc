/**
 * The HTML of the provider's own pages in the authorization-code flow (sign-in-flow.ts): the
 * sign-in form and the consent screen, minimal but real — forms that post, buttons, no
 * script but one line. Their markup follows Authrim's built-in forms (`/flow/login`,
 * `/auth/consent`: fields `challenge_id`, `username`, `password`, `approved`, buttons
 * `.approve` and `.deny`), so a browser script written for one finds its way on the other.
 *
 * Each page takes the one-time `challenge_id` (and a knob such as `ms`) out of its address
 * with `history.replaceState` as it loads, as sign-in pages do so the id is neither
 * bookmarked nor sent on as a Referer; the form carries it instead. A page then has one URL
 * (`/login`, `/consent`) on every visit, and so one `url` tag for its web vitals.
 */

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for HTML content and quoted attribute values. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => escapes[c]!);

/** The page around a body: one stylesheet, and the address cleaned of its query. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<script>history.replaceState(null, "", location.pathname);</script>
<style>body{font:16px system-ui,sans-serif;margin:0;background:#eef1f6}main{max-width:24rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px}
h1{margin:0 0 1rem;font-size:1.5rem}label,input,button{display:block;width:100%;box-sizing:border-box;margin:.4rem 0}input,button{padding:.6rem;font-size:1rem}
button{background:#3454d1;color:#fff;border:0;border-radius:4px}button.deny{background:#888}.actions{display:flex;gap:1rem}.actions form{flex:1}
.error{color:#b00020}</style></head>
<body><main>
${body}
</main></body>
</html>`;
}

export interface SignInView {
  readonly challengeId: string;
  readonly clientName: string;
  /** The email typed before, kept after a failed try. */
  readonly username: string;
  readonly error: string | null;
}

/** The sign-in form: email and password, posted to /login with the challenge. */
export function signInPage(view: SignInView): string {
  return page(
    "Sign in",
    `<h1>Sign in</h1>
<p>to continue to <strong id="client">${escapeHtml(view.clientName)}</strong></p>
${view.error === null ? "" : `<p id="error" class="error" role="alert">${escapeHtml(view.error)}</p>`}
<form method="post" action="/login">
<input type="hidden" name="challenge_id" value="${escapeHtml(view.challengeId)}">
<label for="username">Email</label><input id="username" name="username" type="text" autocomplete="username" required value="${escapeHtml(view.username)}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button id="submit" type="submit">Sign in</button>
</form>`,
  );
}

/** What each scope lets the client see, in the words of the consent screen. */
const SCOPE_WORDS: Readonly<Record<string, string>> = {
  openid: "Know who you are",
  profile: "See your name",
  email: "See your email address",
  offline_access: "Stay signed in for you",
};

export interface ConsentView {
  readonly challengeId: string;
  readonly clientName: string;
  readonly scope: string;
}

/** The consent screen: the client, what it asks for, and a form each for deny and approve. */
export function consentPage(view: ConsentView): string {
  const scopes = view.scope
    .split(" ")
    .filter(Boolean)
    .map((s) => `<li data-scope="${escapeHtml(s)}">${escapeHtml(SCOPE_WORDS[s] ?? s)}</li>`)
    .join("");
  const answer = (approved: boolean, label: string) => `<form method="post" action="/consent">
<input type="hidden" name="challenge_id" value="${escapeHtml(view.challengeId)}"><input type="hidden" name="approved" value="${approved}">
<button type="submit" class="${approved ? "approve" : "deny"}">${label}</button></form>`;
  return page(
    "Allow access",
    `<h1>Allow access?</h1>
<p><strong id="client">${escapeHtml(view.clientName)}</strong> asks to:</p>
<ul id="scopes">${scopes}</ul>
<div class="actions">${answer(false, "Deny")}${answer(true, "Approve")}</div>`,
  );
}
