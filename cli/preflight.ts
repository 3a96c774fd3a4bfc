/**
 * The pre-flight probe: before any load, one request per built-in scenario (the mail-OTP
 * login: its first three; introspect and token exchange: a second, with a revoked token),
 * made with the run's own seed set and client, that tells whether the provider is set up so
 * that the run can pass. What each answer means is decided in
 * scenarios/preflight.ts; this module only sends the requests. A run whose probe found a
 * misconfiguration is refused (exit 104, invalid input) with the cause and the call that
 * fixes it; `--no-preflight` skips the probe, and the run then fails on its success
 * threshold instead. A probe that could not be made is said, and the run goes ahead: its
 * verdict is the judge.
 */
import { codesToVerify, parseSeedSet, type SeedData } from "../core/data/seed-set.ts";
import { parseRunSpec } from "../core/spec/run-spec.ts";
import type { ScenarioSpec } from "../core/spec/types.ts";
import {
  findingLines,
  judgeEmailCode,
  judgeEmailVerify,
  judgeIntrospect,
  judgeRevokedExchange,
  judgeRevokedIntrospection,
  judgeSilentAuth,
  judgeTokenExchange,
  judgeUserinfo,
  type ChallengeShardsAnswer,
  type Finding,
  type ProbeAnswer,
  type ProbeContext,
} from "../scenarios/preflight.ts";
import type { EdgeloadClient } from "./client.ts";
import { CliError, EXIT } from "./connection.ts";

const TIMEOUT_MS = 10_000;
const FORM = "application/x-www-form-urlencoded";
const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

/** What the probe found: the findings, or why it asked nothing. */
export type PreflightResult = { readonly findings: readonly Finding[] } | { readonly notProbed: string };

/** Sends a request and reads what the judges need of the answer (and the body, for later steps). */
async function ask(url: string, init: RequestInit): Promise<ProbeAnswer & { body: Record<string, unknown> | null; headers: Headers }> {
  const response = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
  const text = await response.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {}
  const location = response.headers.get("location");
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    status: response.status,
    error: str(body?.error),
    description: str(body?.error_description),
    redirectError: location ? new URL(location, url).searchParams.get("error") : null,
    body,
    headers: response.headers,
  };
}

/** One token of a type from the run's access-token set (served as a bare array). */
async function seedToken(client: EdgeloadClient, seed: string, type: string): Promise<string | null> {
  const url = await client.seedUrl(seed, { expiresIn: "5m", format: "array", type });
  const tokens = (await (await fetch(url.url, { signal: AbortSignal.timeout(TIMEOUT_MS) })).json()) as unknown;
  return Array.isArray(tokens) ? (tokens.find((t): t is string => typeof t === "string") ?? null) : null;
}

async function seedData(client: EdgeloadClient, seed: string): Promise<SeedData | null> {
  const url = await client.seedUrl(seed, { expiresIn: "5m" });
  const parsed = parseSeedSet(await (await fetch(url.url, { signal: AbortSignal.timeout(TIMEOUT_MS) })).json());
  return parsed.ok ? parsed.data : null;
}

const authorizeQuery = (o: ScenarioSpec["options"], extra: Record<string, string>) =>
  new URLSearchParams({
    response_type: "code",
    client_id: o.clientId ?? "",
    redirect_uri: o.redirectUri ?? "",
    scope: "openid",
    prompt: "none",
    state: "edgeload-preflight",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGrSH4wP9Q",
    code_challenge_method: "S256",
    ...extra,
  });

/** The scenario's probe; null when it has none (refresh: a probe would spend a family's token). */
async function probe(client: EdgeloadClient, target: string, s: ScenarioSpec): Promise<Finding | null | "nothing to ask"> {
  const o = s.options;
  const c: ProbeContext = { target, clientId: o.clientId ?? "<client id>" };
  const seed = s.seed;
  if (!seed) return "nothing to ask";
  switch (s.name) {
    case "userinfo": {
      const token = await seedToken(client, seed, "valid");
      if (!token) return "nothing to ask";
      return judgeUserinfo(await ask(`${target}/userinfo`, { headers: { authorization: `Bearer ${token}` } }));
    }
    case "introspect": {
      const token = await seedToken(client, seed, "wrong_audience");
      if (!token || !o.clientId || !o.clientSecret) return "nothing to ask";
      const auth = basic(o.clientId, o.clientSecret);
      const introspect = (t: string) =>
        ask(`${target}/introspect`, {
          method: "POST",
          headers: { authorization: auth, "content-type": FORM },
          body: new URLSearchParams({ token: t }),
        });
      const answer = await introspect(token);
      const found = judgeIntrospect(c, answer.body?.active, answer);
      const revoked = found ? null : await seedToken(client, seed, "revoked");
      return found ?? (revoked ? judgeRevokedIntrospection(c, (await introspect(revoked)).body?.active) : null);
    }
    case "token-exchange": {
      const token = await seedToken(client, seed, "valid");
      if (!token || !o.clientId || !o.clientSecret) return "nothing to ask";
      const auth = basic(o.clientId, o.clientSecret);
      const type = "urn:ietf:params:oauth:token-type:access_token";
      const exchange = (subject: string) => {
        const form = new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: subject,
          subject_token_type: type,
          requested_token_type: type,
          scope: o.scope,
        });
        if (o.audience) form.set("audience", o.audience);
        return ask(`${target}/token`, { method: "POST", headers: { authorization: auth, "content-type": FORM }, body: form });
      };
      const found = judgeTokenExchange(c, await exchange(token));
      const revoked = found ? null : await seedToken(client, seed, "revoked");
      return found ?? (revoked ? judgeRevokedExchange(c, await exchange(revoked)) : null);
    }
    case "silent-auth": {
      const data = await seedData(client, seed);
      const session = data?.kind === "sessions" ? data.entries[0] : undefined;
      if (!session) return "nothing to ask";
      return judgeSilentAuth(c, await ask(`${target}/authorize?${authorizeQuery(o, {})}`, { headers: { cookie: `authrim_session=${session.session_id}` } }));
    }
    case "otp-login":
      return probeOtpLogin(client, target, s, c);
    default:
      return "nothing to ask";
  }
}

/**
 * The mail-OTP login up to its silent authorize: test endpoints on, the user known, codes
 * found by the worker that verifies them (enough of them, unless one challenge-shard count is
 * stored, that a split cannot pass by chance), the client trusted.
 */
async function probeOtpLogin(client: EdgeloadClient, target: string, s: ScenarioSpec, c: ProbeContext): Promise<Finding | null | "nothing to ask"> {
  const data = await seedData(client, s.seed!);
  const user = data?.kind === "users" ? data.entries[0] : undefined;
  if (!user || !s.options.adminSecret) return "nothing to ask";
  const admin = { authorization: `Bearer ${s.options.adminSecret}`, "content-type": "application/json" };
  const shardsAnswer = await ask(`${target}/api/admin/settings/challenge-shards`, { headers: admin });
  const shards = shardsAnswer.status === 200 ? (shardsAnswer.body as ChallengeShardsAnswer) : null;
  const verifies: Array<Awaited<ReturnType<typeof ask>>> = [];
  for (let i = 0; i < codesToVerify(shards?.source); i++) {
    const issued = await ask(`${target}/api/admin/test/email-codes`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({ email: user.email, create_user: false }),
    });
    const issuedFinding = judgeEmailCode(c, issued);
    const { code, otpSessionId } = (issued.body ?? {}) as { code?: unknown; otpSessionId?: unknown };
    if (issuedFinding || typeof code !== "string" || typeof otpSessionId !== "string") return issuedFinding;
    verifies.push(
      await ask(`${target}/api/auth/email-codes/verify`, {
        method: "POST",
        headers: { cookie: `authrim_otp_session=${otpSessionId}`, "content-type": "application/json" },
        body: JSON.stringify({ email: user.email, code }),
      }),
    );
  }
  const split = judgeEmailVerify(c, shards, verifies);
  if (split) return split;
  const session = verifies.map((v) => v.body?.sessionId).find((id) => typeof id === "string");
  if (typeof session !== "string") return null;
  return judgeSilentAuth(c, await ask(`${target}/authorize?${authorizeQuery(s.options, {})}`, { headers: { cookie: `authrim_session=${session}` } }));
}

/**
 * Probes the provider of a built-in scenario's run; a finding ends the command (exit 104)
 * with its cause and fix. Nothing to probe, or a probe that could not be made, lets the run go ahead.
 */
export async function preflight(client: EdgeloadClient, rawSpec: unknown, log: (line: string) => void = console.log): Promise<PreflightResult> {
  const parsed = parseRunSpec(rawSpec);
  const scenario = parsed.ok ? parsed.spec.scenario : null;
  if (!parsed.ok || !scenario) return { notProbed: "no built-in scenario" };
  const target = parsed.spec.target;
  let found: Finding | null | "nothing to ask";
  try {
    found = await probe(client, target, scenario);
  } catch (error) {
    // The run goes ahead (its verdict will say what is wrong), but a check that could not be made is said.
    log(`⚠ pre-flight: could not check ${target} for the ${scenario.name} scenario: ${reasonOf(error)}`);
    return { notProbed: reasonOf(error) };
  }
  if (found === "nothing to ask") return { notProbed: "nothing to ask" };
  if (!found) return { findings: [] };
  throw new CliError(
    [
      ...findingLines(target, scenario.name, [found]),
      "the run was not started: fix the provider (docs/authrim.md), or run with --no-preflight to measure it as it is (the run will fail).",
    ].join("\n"),
    EXIT.invalidConfig,
  );
}

/** One line for a failed probe: undici keeps the network reason (ECONNREFUSED, …) in its cause. */
function reasonOf(error: unknown): string {
  const e = error as Error & { cause?: { code?: string } };
  return e.cause?.code ?? e.message.split("\n")[0]!;
}
