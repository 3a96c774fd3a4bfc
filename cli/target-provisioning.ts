/**
 * Sets the local target up the way docs/authrim.md has an operator set up a real Authrim
 * before load-testing it. Kept apart from local-stack.ts, which starts the Workers: this is
 * what the stack then asks of the target over its admin API.
 */
import type { unstable_startWorker } from "wrangler";
import type { TargetClient } from "./dev-file.ts";

type StartedWorker = Awaited<ReturnType<typeof unstable_startWorker>>;

/** Where the load-test client's codes are "sent": never followed, only parsed from Location. */
const LOAD_TEST_REDIRECT_URI = "http://127.0.0.1/callback";

/**
 * Makes the local target ready for seeding and for all six scenarios, as docs/authrim.md
 * has an operator set up a real Authrim: a signing key (created once, kept in persisted
 * state), a fresh trusted load-test client that skips consent and may exchange its own
 * subjects' tokens, token exchange on, one challenge-shard count for the workers that issue
 * and verify mail-OTP codes, and strict introspection validation on. The target refuses
 * each of these by default, as Authrim does.
 */
export async function provisionTarget(target: StartedWorker, adminSecret: string): Promise<TargetClient> {
  const base = (await target.url).origin;
  const admin = (path: string, init: RequestInit = {}) =>
    target.fetch(base + path, { ...init, headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" } } as never);
  const key = await admin("/api/admin/test/signing-key");
  await key.text();
  if (key.status === 404) await (await admin("/api/admin/signing-keys/rotate", { method: "POST" })).text();
  const response = await admin("/api/admin/clients", {
    method: "POST",
    body: JSON.stringify({
      client_name: "edgeload load test",
      redirect_uris: [LOAD_TEST_REDIRECT_URI],
      scope: "openid profile email",
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:token-exchange"],
      is_trusted: true,
      skip_consent: true,
    }),
  });
  if (response.status !== 201) throw new Error(`could not register the load-test client on the target: ${response.status} ${await response.text()}`);
  const { client } = (await response.json()) as { client: { client_id: string; client_secret: string } }; // Authrim's shape
  // On Authrim these two are set on the client's D1 row; the target takes them by PUT.
  const exchanger = { token_exchange_allowed: true, allowed_subject_token_clients: [client.client_id] };
  const settings: Array<[string, string, unknown]> = [
    ["the load-test client's token-exchange flags", `/api/admin/clients/${client.client_id}`, exchanger],
    ["token exchange on", "/api/admin/settings/token-exchange", { enabled: true }],
    // Authrim's setup gives its verifying worker 16 challenge shards and leaves the issuing one at 4.
    ["one challenge-shard count for issuing and verifying mail-OTP codes", "/api/admin/settings/challenge-shards", { shards: 16 }],
  ];
  for (const [what, path, body] of settings) {
    const answer = await admin(path, { method: "PUT", body: JSON.stringify(body) });
    if (answer.status !== 200) throw new Error(`could not set ${what} on the target: ${answer.status} ${await answer.text()}`);
    await answer.text();
  }
  // Like Authrim, the target checks audience and client on /introspect only once strict
  // validation is on (docs/authrim.md): an operator turns it on before load-testing.
  const strict = await admin("/api/admin/settings/introspection-validation", { method: "PUT", body: JSON.stringify({ strictValidation: true }) });
  if (strict.status !== 200) throw new Error(`could not turn strict introspection validation on: ${strict.status} ${await strict.text()}`);
  await strict.text();
  return { clientId: client.client_id, clientSecret: client.client_secret, redirectUri: LOAD_TEST_REDIRECT_URI };
}
