/**
 * A relying party's redirect page, served by the target for its test clients:
 * `GET /app/callback` is where the browser lands at the end of the authorization-code flow
 * (register it as the client's redirect URI, as the browser-login scenario does). Like an
 * OAuth client's page it reads `code` and `state` (or `error`) from its address, shows them
 * (`#code`, `#state`, `#error`) and takes them out of the address bar; it exchanges nothing
 * itself — the scenario sends the token request from the script, as a client's backend would.
 */
import { Hono } from "hono";
import { escapeHtml, page } from "./flow-pages.ts";

export const clientPageApp = new Hono();

clientPageApp.get("/callback", (c) => {
  const shown = (id: string, value: string | undefined) => `<p>${id}: <output id="${id}">${escapeHtml(value ?? "")}</output></p>`;
  const error = c.req.query("error");
  const body =
    error === undefined
      ? `<h1>Signed in</h1>\n<p>Back at the client with an authorization code.</p>\n${shown("code", c.req.query("code"))}\n${shown("state", c.req.query("state"))}`
      : `<h1>Not signed in</h1>\n${shown("error", error)}\n${shown("state", c.req.query("state"))}`;
  return c.html(page("Signed in", body), 200, { "cache-control": "no-store" });
});
