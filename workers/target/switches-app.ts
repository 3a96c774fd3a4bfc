/**
 * The admin calls that switch on what a load test needs, in Authrim v0.1.15's routes and
 * shapes (docs/authrim.md lists them per scenario): token exchange on or off, the per-user
 * authorization-code limit, and a client's trust, consent and token-exchange flags; and the
 * test endpoints on or off (Authrim's is an environment variable); the mail-OTP challenge
 * shards (challenge-shards.ts). Mounted
 * by index.ts beside the rest of the admin API (admin-app.ts).
 */
import { type Context, Hono } from "hono";
import { requireAdmin } from "./admin-auth.ts";
import { stringList } from "./admin-app.ts";
import { findClient, updateClient, type ClientFlags } from "./directory.ts";
import { featureSettings, forgetFeatureSetting, OAUTH_CONFIG, type OAuthConfigName, storeFeatureSetting, storeOAuthConfig } from "./feature-settings.ts";
import type { TargetEnv } from "./target-env.ts";
import { DEFAULT_CHALLENGE_SHARDS } from "./challenge-shards.ts";

export const switchesApp = new Hono<{ Bindings: TargetEnv }>();

switchesApp.get("/api/admin/settings/token-exchange", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const s = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  return c.json({ settings: { enabled: s.tokenExchangeEnabled, allowedSubjectTokenTypes: ["access_token"] } });
});

/** A `PUT {"enabled": bool}` that stores the switch `setting`, as Authrim's settings routes answer it. */
function putSwitch(setting: "token_exchange" | "test_endpoints") {
  return async (c: Context<{ Bindings: TargetEnv }>) => {
    const denied = await requireAdmin(c);
    if (denied) return denied;
    const body = (await c.req.json().catch(() => null)) as { enabled?: unknown } | null;
    if (!body || typeof body.enabled !== "boolean") return c.json({ error: "invalid_value", error_description: "enabled must be a boolean" }, 400);
    await storeFeatureSetting(c.env.TARGET_DB, setting, { enabled: body.enabled });
    return c.json({ success: true, settings: { enabled: body.enabled } });
  };
}

switchesApp.put("/api/admin/settings/token-exchange", putSwitch("token_exchange"));
/** The test endpoints on or off: this target's stand-in for Authrim's ENABLE_TEST_ENDPOINTS and a redeploy. */
switchesApp.put("/api/admin/settings/test-endpoints", putSwitch("test_endpoints"));

/** The OAuth config this target knows, in Authrim's shape: `{configs: {NAME: {value, default}}}`. */
switchesApp.get("/api/admin/settings/oauth-config", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const { oauthConfig } = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  return c.json({
    configs: Object.fromEntries(Object.entries(OAUTH_CONFIG).map(([name, b]) => [name, { value: oauthConfig[name as OAuthConfigName], default: b.default }])),
  });
});

/** Authrim's OAuth config overrides; this target knows two of them (feature-settings.ts). */
switchesApp.put("/api/admin/settings/oauth-config/:name", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const name = c.req.param("name");
  if (!Object.hasOwn(OAUTH_CONFIG, name))
    return c.json({ error: "invalid_config", error_description: `Unknown config name: ${name}. Valid names: ${Object.keys(OAUTH_CONFIG).join(", ")}` }, 400);
  const value = ((await c.req.json().catch(() => null)) as { value?: unknown } | null)?.value;
  const { min, max } = OAUTH_CONFIG[name as OAuthConfigName];
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    return c.json({ error: "invalid_value", error_description: `${name} must be a whole number from ${min} to ${max}` }, 400);
  await storeOAuthConfig(c.env.TARGET_DB, name as OAuthConfigName, value);
  return c.json({ success: true, name, value });
});

/** The challenge shards as Authrim's management worker answers: its own count and where it came from. */
switchesApp.get("/api/admin/settings/challenge-shards", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const { challengeShards: s } = await featureSettings(c.env.TARGET_DB, c.env, Date.now());
  const env = Number(c.env.MANAGEMENT_CHALLENGE_SHARDS) || null;
  return c.json({ current: s.management, source: s.source, kv_value: s.stored, env_value: env, default_value: DEFAULT_CHALLENGE_SHARDS });
});

/** One count for every worker (Authrim stores it in KV, where it wins over each worker's environment). */
switchesApp.put("/api/admin/settings/challenge-shards", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const shards = ((await c.req.json().catch(() => null)) as { shards?: unknown } | null)?.shards;
  if (typeof shards !== "number" || !Number.isInteger(shards) || shards < 1 || shards > 256)
    return c.json({ error: "invalid_request", error_description: "shards must be a whole number from 1 to 256", error_code: "AR010002" }, 400);
  await storeFeatureSetting(c.env.TARGET_DB, "challenge_shards", { shards });
  return c.json({ success: true, shards, note: "Challenge shard count updated. Changes affect new challenges only." });
});

/** This target's own: forgets the stored count, as deleting Authrim's KV key would, so each worker has its own again. */
switchesApp.delete("/api/admin/settings/challenge-shards", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  await forgetFeatureSetting(c.env.TARGET_DB, "challenge_shards");
  return c.json({ success: true });
});

/**
 * A client's flags: `is_trusted` and `skip_consent` as Authrim's PUT takes them;
 * `token_exchange_allowed` and `allowed_subject_token_clients` as a convenience for what an
 * Authrim operator sets on the client's D1 row.
 */
switchesApp.put("/api/admin/clients/:id", async (c) => {
  const denied = await requireAdmin(c);
  if (denied) return denied;
  const body = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
  if (!body) return c.json({ error: "invalid_request", error_description: "a JSON body is required" }, 400);
  const flag = (name: string) => (typeof body[name] === "boolean" ? (body[name] as boolean) : undefined);
  const flags: ClientFlags = {
    is_trusted: flag("is_trusted"),
    skip_consent: flag("skip_consent"),
    token_exchange_allowed: flag("token_exchange_allowed"),
    allowed_subject_token_clients: body.allowed_subject_token_clients === undefined ? undefined : stringList(body.allowed_subject_token_clients),
  };
  const id = c.req.param("id");
  if (!(await updateClient(c.env.TARGET_DB, id, flags))) return c.json({ error: "not_found", error_description: "Client not found" }, 404);
  return c.json({ client: await findClient(c.env.TARGET_DB, id) });
});
