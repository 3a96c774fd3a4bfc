/**
 * The local target: an Authrim-style OIDC provider subset (see docs/authrim.md
 * for the contract, README.md beside this file for what is implemented) plus the
 * deterministic knobs of knobs.ts on every other path (`/delay?ms=20`, …).
 *
 * The provider's endpoints are oidc-app.ts's, its sign-in and consent pages sign-in-flow.ts's,
 * its admin API admin-app.ts's; this file only mounts them. State lives where a real provider keeps it: signing keys and revocations in
 * Durable Objects (revocations sharded by jti; target-env.ts), clients and users in D1.
 * Admin routes need `Authorization: Bearer <ADMIN_API_SECRET>` (admin-auth.ts); the local
 * stack provisions that secret.
 *
 * Under `/app` live the load-test example apps: the demo user/messaging API
 * (demo-app.ts), config streaming over SSE (config-app.ts, config-hub.ts) and the records
 * API with two builds (records.ts); `GET /metrics` exposes the target's own series in the
 * Prometheus text format (metrics.ts).
 */
import { Hono } from "hono";
import { adminApp } from "./admin-app.ts";
import { configApp } from "./config-app.ts";
import { demoApp } from "./demo-app.ts";
import { knobs } from "./knobs.ts";
import { countRequests, metricsApp } from "./metrics.ts";
import { oidcApp } from "./oidc-app.ts";
import { recordsApp } from "./records.ts";
import { signInApp } from "./sign-in-page.ts";
import { signInFlowApp } from "./sign-in-flow.ts";
import { clientPageApp } from "./client-page.ts";
import { countRunRequests } from "./request-ledger.ts";
import { switchesApp } from "./switches-app.ts";
import { websocketEcho } from "./websocket-echo.ts";
import type { TargetEnv } from "./target-env.ts";

export { AuthState } from "./auth-state.ts";
export { ConfigHub } from "./config-hub.ts";
export { RequestLedger } from "./request-ledger.ts";
export { RefreshTokens } from "./refresh-tokens.ts";
export { Revocations } from "./revocations.ts";
export { SigningKeys } from "./signing-keys.ts";

const app = new Hono<{ Bindings: TargetEnv }>();

// Requests of each edgeload run as they arrive, before anything can fail (request-ledger.ts).
app.use("*", countRunRequests);
// Per-route request counts and durations of this isolate, for GET /metrics (metrics.ts).
app.use("*", countRequests);

// The OpenID provider's endpoints (oidc-app.ts) and the admin API that seeds and configures it (admin-app.ts).
app.route("/", oidcApp);
app.route("/", adminApp);
app.route("/", switchesApp);
// The provider's sign-in form and consent screen, where /authorize sends a browser (sign-in-flow.ts).
app.route("/", signInFlowApp);
// The demo user/messaging API of the closed-model examples (demo-app.ts).
app.route("/app", demoApp);
// Config streaming over SSE (config-app.ts) and the records API with its two builds (records.ts).
app.route("/app", configApp);
app.route("/app", recordsApp);
// A sign-in form for k6/browser scripts, slow on request (sign-in-page.ts).
app.route("/app", signInApp);
// A client's redirect page, where the browser flow ends with its code (client-page.ts).
app.route("/app", clientPageApp);
// Prometheus text exposition of what the target knows about itself (metrics.ts).
app.route("/", metricsApp);
// A WebSocket echo for k6 scripts' k6/websockets (websocket-echo.ts).
app.get("/ws/echo", (c) => websocketEcho(c.req.raw));

app.all("*", (c) => knobs(c.req.raw));

export default app satisfies ExportedHandler<TargetEnv>;
