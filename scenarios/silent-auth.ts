/**
 * Silent authentication: GET /authorize with `prompt=none` and the `authrim_session`
 * cookie of a seeded login session, redirects not followed. Success is a 302 whose
 * Location carries a `code` and the `state` that was sent. `login_required` (the session is
 * not known) and `consent_required` (the client is not trusted or does not skip consent)
 * are counted: each is a setup to fix, and the presets bound both at zero.
 */
import { s256 } from "../core/data/web-crypto.ts";
import type { Flow } from "./flow.ts";
import { randomToken, required, seedEntries, shuffled, type ScenarioDefinition } from "./scenario.ts";
import { SCENARIO_OUTLINES } from "../core/spec/builtin-scenarios.ts";

const FOUND = new Set([302]);

export const silentAuth: ScenarioDefinition = {
  ...SCENARIO_OUTLINES["silent-auth"],
  create(ctx): Flow {
    const sessions = shuffled(seedEntries(ctx, "sessions"));
    const base = new URL(`${ctx.target}/authorize`);
    const fixed = new URLSearchParams({
      response_type: "code",
      client_id: required(ctx.options, "clientId"),
      redirect_uri: required(ctx.options, "redirectUri"),
      scope: "openid",
      prompt: "none",
      code_challenge_method: "S256",
    }).toString();
    return {
      async run(io, it) {
        const session = sessions[it.global % sessions.length]!;
        const state = randomToken(12);
        const challenge = await s256(randomToken());
        const url = `${base.href}?${fixed}&state=${state}&nonce=${randomToken(12)}&code_challenge=${challenge}`;
        const start = io.now();
        const r = await io.send(0, { url, method: "GET", headers: { cookie: `authrim_session=${session.session_id}` }, expect: FOUND, redirect: "manual" });
        io.trend("silent_auth_duration", io.now() - start);
        const location = r.status === 302 ? r.headers?.get("location") : null;
        const params = location ? new URL(location, base).searchParams : null;
        const ok = !!params?.get("code") && params.get("state") === state;
        const error = params?.get("error");
        if (error === "login_required" || error === "consent_required") io.count(error);
        io.check(ok);
        io.rate("silent_auth_success", ok);
      },
    };
  },
};
