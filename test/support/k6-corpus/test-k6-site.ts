/**
 * A look-alike of test.k6.io's PHP pages, for the corpus (targets.ts): the front page, and the
 * login flow of my_messages.php and login.php as grafana/test.k6.io's site/ writes them. The
 * real site needs PHP, which this project does not install (real-targets.ts LOOK_ALIKES):
 *
 * - my_messages.php sets a fresh `csrf` cookie and shows the login form with that token, or
 *   "Welcome, <user>!" for the `uid`/`sid` cookies of admin (3221) or test_user (2233).
 * - login.php compares the form's csrftoken with the `csrf` cookie, sets `uid`/`sid` (to "bad"
 *   on a wrong login), answers 302 to /my_messages.php when `redir` is sent, and 403 when the
 *   token is wrong (PHP's 403 overrides the 302 its Location header set, so it is not followed).
 *
 * The front page is about as long as the real one (over 10,000 bytes: the corpus's website
 * scripts check that), not byte for byte: a script checking its exact size fails under both
 * tools, as it would against a site that has changed.
 */
import type { ServerResponse } from "node:http";
import { cookies, fields, type Route, text } from "./http-route.ts";

const FEATURES = ["Browse the news page", "Log in and read your messages", "Flip a coin", "Compute pi", "Browse the contacts page", "Search the site"];

/** The front page test.k6.io (and QuickPizza, which now hosts it) answers. */
export const TEST_K6_PAGE = `<!DOCTYPE html><html><head><title>Demo website for load testing</title></head>
<body><h1>Welcome to the k6.io demo site!</h1>
<p class="description">This is a replacement of the service test.k6.io, now hosted on the loopback for the corpus.</p>
<a href="/news.php">news</a> <a href="/my_messages.php">messages</a>
${FEATURES.map((f, i) => `<section id="feature-${i}"><h2>${f}</h2>\n${"<p>This page is here to be load tested: every request is cheap, and every answer is the same.</p>\n".repeat(20)}</section>`).join("\n")}
</body></html>`;

const page = (title: string, body: string) => `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<html>
<head>
<title>${title}</title>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
</head>
<body>
${body}
<p><small>Imitation page. Copyright &copy; ${new Date().getUTCFullYear()}, k6.io</small></p>
</body>
</html>`;

/** The accounts login.php knows: login → [password, uid, sid, the messages shown]. */
const ACCOUNTS: Readonly<Record<string, readonly [string, string, string, readonly string[]]>> = {
  admin: [
    "123",
    "3221",
    "39b77ac6-39c4-4c43-98b3-6b2816682036",
    ["DenyHosts report", "LoadImpact is now following you on Twitter", "Delivery Status Notification (Failure)"],
  ],
  test_user: ["1234", "2233", "45b77ac6-39c4-4c43-98b3-6b2816682036", ["You're hired!"]],
};

const setCookie = (name: string, value: string) => `${name}=${value}; Max-Age=3600; Path=/; HttpOnly`;

const form = (csrf: string, submit: string) => `<form method="POST" action="/login.php">
<input type="hidden" name="redir" value="1">
<input type="hidden" name="csrftoken" value="${csrf}">
${submit === "Go!" ? '<input type="text" name="login" autocomplete="off"><input type="password" name="password" autocomplete="off">\n' : ""}<input type="submit" value="${submit}">
</form>`;

function myMessages(jar: Record<string, string>, res: ServerResponse): void {
  const csrf = Buffer.from(String(100_000_000 + Math.floor(Math.random() * 900_000_000))).toString("base64");
  const user = Object.entries(ACCOUNTS).find(([, [, uid, sid]]) => jar.uid === uid && jar.sid === sid);
  const body = user
    ? `<h2>Welcome, ${user[0]}!</h2>\n<table>${user[1][3].map((m, i) => `<tr><td>${i + 1}</td><td>${m}</td></tr>`).join("")}</table>\n${form(csrf, "Logout")}`
    : `<h2>Unauthorized</h2>\n<p><small>Hint: try <code>admin</code>/<code>123</code> or <code>test_user</code>/<code>1234</code></small></p>\n${form(csrf, "Go!")}`;
  text(res, 200, page("My messages", `<p><a href="/">&lt; Back</a></p>\n${body}`), "text/html; charset=UTF-8", { "set-cookie": setCookie("csrf", csrf) });
}

export const TEST_K6_ROUTES: readonly Route[] = [
  [/^\/my_messages\.php$/, (req, _url, _body, res) => myMessages(cookies(req), res)],
  [
    /^\/login\.php$/,
    (req, _url, body, res) => {
      const f = req.method === "POST" ? fields(req, body) : {};
      const validToken = (cookies(req).csrf ?? false) === (f.csrftoken ?? "<not set>");
      const account = f.login ? ACCOUNTS[f.login] : undefined;
      const loggedIn = validToken && account !== undefined && account[0] === f.password;
      const headers: Record<string, string | string[]> = {
        "set-cookie": [setCookie("uid", loggedIn ? (account?.[1] ?? "bad") : "bad"), setCookie("sid", loggedIn ? (account?.[2] ?? "bad") : "bad")],
        ...(f.redir !== undefined ? { location: "/my_messages.php" } : {}),
      };
      if (!validToken) return text(res, 403, `error: invalid csrf token\ntoken: ${f.csrftoken ?? "<not set>"}`, "text/plain", headers);
      const said = !f.login
        ? "error: no login!"
        : !f.password
          ? "error: no password!"
          : loggedIn
            ? `user ${f.login} successfully authorized.`
            : "error: invalid login/password combination!";
      text(res, f.redir !== undefined ? 302 : 200, page("Login", said), "text/html; charset=UTF-8", headers);
    },
  ],
];
