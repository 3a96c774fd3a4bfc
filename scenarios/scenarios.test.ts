/**
 * The built-in scenarios as pure flows, against a scripted provider: what each one sends,
 * how it judges answers, and which custom metrics it records. The same flows run in the
 * shards against the real target in test/e2e/scenarios.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { SeedData, SeedToken, TokenType } from "../core/data/seed-set.ts";
import { CustomMetrics } from "../core/metrics/metric-stats.ts";
import { introspect, tokenExchange, userinfo } from "./access-token-scenarios.ts";
import type { FlowIO, FlowRequest, FlowResponse } from "./flow.ts";
import { otpLogin } from "./otp-login.ts";
import { refresh } from "./refresh.ts";
import type { ScenarioContext } from "./scenario.ts";
import { shuffled } from "./scenario.ts";
import { silentAuth } from "./silent-auth.ts";

type Responder = (
  step: number,
  r: FlowRequest,
) =>
  | Promise<Partial<FlowResponse> & { json?: unknown; setCookie?: string; location?: string }>
  | (Partial<FlowResponse> & { json?: unknown; setCookie?: string; location?: string });

/** A FlowIO whose "provider" is a function; metrics and checks land in plain counters. */
function scriptedIO(respond: Responder) {
  const metrics = new CustomMetrics();
  const sent: Array<{ step: number; request: FlowRequest }> = [];
  const checks = { passed: 0, failed: 0 };
  const io: FlowIO = {
    sample: () => {},
    async send(step, request) {
      sent.push({ step, request });
      const r = await respond(step, request);
      const headers = new Headers();
      if (r.setCookie) headers.append("set-cookie", r.setCookie);
      if (r.location) headers.set("location", r.location);
      return {
        status: r.status ?? 200,
        error: r.error ?? null,
        headers,
        body: r.json !== undefined ? JSON.stringify(r.json) : (r.body ?? null),
        durationMs: 0,
      };
    },
    check: (passed) => void (passed ? checks.passed++ : checks.failed++),
    count: (name, n = 1) => metrics.count(name, n),
    rate: (name, passed) => metrics.rate(name, passed),
    trend: (name, ms) => metrics.trend(name, ms * 1000),
    sleep: async () => {},
    now: () => Date.now(),
  };
  return { io, metrics, sent, checks };
}

const jwt = (i: number) => `h.p${i}.s`;
const tokens = (types: Record<string, number>): SeedToken[] =>
  Object.entries(types).flatMap(([type, n], k) => Array.from({ length: n }, (_, i) => ({ access_token: jwt(k * 1000 + i), type: type as TokenType })));

function context(data: SeedData | null, extra: Partial<ScenarioContext> = {}): ScenarioContext {
  return {
    target: "http://127.0.0.1:9",
    options: { clientId: "cid", clientSecret: "sec", adminSecret: "adm", redirectUri: "http://127.0.0.1/cb", scope: "openid profile" },
    data,
    shardIndex: 0,
    shardCount: 1,
    ...extra,
  };
}

async function iterate(flow: { run: (io: FlowIO, it: { global: number; shard: number; region: string }) => Promise<void> }, io: FlowIO, n: number) {
  for (let i = 0; i < n; i++) await flow.run(io, { global: i, shard: 0, region: "wnam" });
}

describe("shuffled", () => {
  it("is a fixed permutation, the same in every shard", () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    expect(shuffled(items)).toEqual(shuffled(items));
    expect([...shuffled(items)].sort((a, b) => a - b)).toEqual(items);
    expect(shuffled(items)).not.toEqual(items);
  });
});

describe("introspect", () => {
  const set = tokens({ valid: 6, valid_exchanged: 1, expired: 2, revoked: 2, wrong_audience: 1, wrong_client: 1 });
  const typeOf = new Map(set.map((t) => [t.access_token, t.type]));
  const tokenIn = (r: FlowRequest) => decodeURIComponent(/token=([^&]*)/.exec(r.body!)![1]!);

  it("counts every answer as correct when active matches the type, and covers every type", async () => {
    const { io, metrics, sent, checks } = scriptedIO((_, r) => ({ json: { active: ["valid", "valid_exchanged"].includes(typeOf.get(tokenIn(r))!) } }));
    await iterate(introspect.create(context({ kind: "access-tokens", entries: set })), io, set.length * 2);
    expect(sent[0]!.request.headers!.authorization).toBe(`Basic ${btoa("cid:sec")}`);
    expect(metrics.rates.get("active_correct")).toEqual([26, 26]);
    expect(new Set(sent.map((s) => typeOf.get(tokenIn(s.request))))).toEqual(
      new Set(["valid", "valid_exchanged", "expired", "revoked", "wrong_audience", "wrong_client"]),
    );
    expect(metrics.counters.get("false_positives") ?? 0).toBe(0);
    expect(checks).toEqual({ passed: 26, failed: 0 });
  });

  it("counts a revoked token reported active as a false positive of its type, and a valid one reported inactive as a false negative", async () => {
    const { io, metrics } = scriptedIO((_, r) => {
      const type = typeOf.get(tokenIn(r))!;
      return { json: { active: type === "revoked" || (type === "valid" ? false : type === "valid_exchanged") } };
    });
    await iterate(introspect.create(context({ kind: "access-tokens", entries: set })), io, set.length);
    expect(metrics.counters.get("false_positives")).toBe(2);
    expect(metrics.counters.get("false_positives{type:revoked}")).toBe(2);
    expect(metrics.counters.get("false_negatives{type:valid}")).toBe(6);
    expect(metrics.rates.get("revoked_rejected")).toEqual([0, 2]);
    expect(metrics.rates.get("wrong_client_rejected")).toEqual([1, 1]);
  });

  it("treats an error answer as a failure, not as a wrong verdict", async () => {
    const { io, metrics, checks } = scriptedIO(() => ({ status: 503, body: "busy" }));
    await iterate(introspect.create(context({ kind: "access-tokens", entries: set })), io, 3);
    expect(metrics.rates.get("introspect_success")).toEqual([0, 3]);
    expect(metrics.rates.has("active_correct")).toBe(false);
    expect(checks.failed).toBe(3);
  });
});

describe("token exchange", () => {
  const set = tokens({ valid: 2, expired: 1, revoked: 1, wrong_client: 5 });
  const typeOf = new Map(set.map((t) => [t.access_token, t.type]));
  const subject = (r: FlowRequest) => typeOf.get(decodeURIComponent(/subject_token=([^&]*)/.exec(r.body!)![1]!));

  it("sends RFC 8693 requests and only uses valid, expired and revoked subjects", async () => {
    const { io, sent } = scriptedIO((_, r) =>
      subject(r) === "valid" ? { json: { access_token: "x" } } : { status: 400, json: { error: "invalid_grant", error_description: "token was revoked" } },
    );
    await iterate(tokenExchange.create(context({ kind: "access-tokens", entries: set })), io, 8);
    const body = new URLSearchParams(sent[0]!.request.body!);
    expect(body.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:token-exchange");
    expect(body.get("subject_token_type")).toBe("urn:ietf:params:oauth:token-type:access_token");
    expect(new Set(sent.map((s) => subject(s.request)))).toEqual(new Set(["valid", "expired", "revoked"]));
    // A refused invalid subject is the expected answer: 400 counts as success for it.
    expect(sent.filter((s) => subject(s.request) !== "valid").every((s) => s.request.expect!.has(400))).toBe(true);
  });

  it("counts an accepted revoked subject as both invalid and revoked accepted", async () => {
    const { io, metrics } = scriptedIO(() => ({ json: { access_token: "x" } }));
    await iterate(tokenExchange.create(context({ kind: "access-tokens", entries: set })), io, 8);
    expect(metrics.counters.get("revoked_token_accepted")).toBe(2);
    expect(metrics.counters.get("invalid_token_accepted")).toBe(4);
    expect(metrics.rates.get("token_exchange_success")).toEqual([4, 8]);
  });
});

describe("userinfo", () => {
  it("sends only valid tokens as bearer and wants a sub", async () => {
    const set = tokens({ valid: 3, revoked: 3 });
    const { io, metrics, sent } = scriptedIO(() => ({ json: { sub: "u1" } }));
    await iterate(userinfo.create(context({ kind: "access-tokens", entries: set })), io, 6);
    const valid = new Set(set.filter((t) => t.type === "valid").map((t) => `Bearer ${t.access_token}`));
    expect(sent.every((s) => valid.has(s.request.headers!.authorization!))).toBe(true);
    expect(metrics.rates.get("userinfo_success")).toEqual([6, 6]);
  });
});

describe("refresh", () => {
  const families = (n: number): SeedData => ({
    kind: "refresh-tokens",
    entries: Array.from({ length: n }, (_, i) => ({ token: `rt-${i}-0`, user_id: `u${i}`, client_id: "cid", client_secret: "sec" })),
  });
  const rotateOnce = (_: number, r: FlowRequest) => {
    const token = new URLSearchParams(r.body!).get("refresh_token")!;
    const [, family, generation] = /^rt-(\d+)-(\d+)$/.exec(token)!;
    return { json: { refresh_token: `rt-${family}-${Number(generation) + 1}` } };
  };

  it("gives every shard its own families, disjoint and complete", () => {
    const data = families(10);
    const owned = [0, 1, 2].map((shardIndex) => refresh.create(context(data, { shardIndex, shardCount: 3 })).snapshot!() as Array<[number, string]>);
    expect(owned.map((o) => o.length)).toEqual([4, 3, 3]);
    expect(
      owned
        .flat()
        .map(([id]) => id)
        .sort((a, b) => a - b),
    ).toEqual([...Array(10).keys()]);
  });

  it("keeps rotating each family with the token the provider returned", async () => {
    const { io, metrics, sent } = scriptedIO(rotateOnce);
    const flow = refresh.create(context(families(2)));
    await iterate(flow, io, 6);
    expect(sent.map((s) => new URLSearchParams(s.request.body!).get("refresh_token"))).toEqual(["rt-0-0", "rt-1-0", "rt-0-1", "rt-1-1", "rt-0-2", "rt-1-2"]);
    expect(metrics.rates.get("rotation_success")).toEqual([6, 6]);
    expect(flow.snapshot!()).toEqual([
      [0, "rt-0-3"],
      [1, "rt-1-3"],
    ]);
  });

  it("never presents a family twice at once: with every family busy the iteration sends nothing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { io, metrics, sent } = scriptedIO(async (step, r) => {
      await gate;
      return rotateOnce(step, r);
    });
    const flow = refresh.create(context(families(1)));
    const first = flow.run(io, { global: 0, shard: 0, region: "wnam" });
    await flow.run(io, { global: 1, shard: 0, region: "wnam" });
    expect(sent).toHaveLength(1);
    expect(metrics.counters.get("families_busy")).toBe(1);
    release();
    await first;
  });

  it("retires a family the provider refuses (reuse detected) and continues the others", async () => {
    const { io, metrics } = scriptedIO((step, r) =>
      new URLSearchParams(r.body!).get("refresh_token")!.startsWith("rt-0-") ? { status: 400, json: { error: "invalid_grant" } } : rotateOnce(step, r),
    );
    const flow = refresh.create(context(families(2)));
    await iterate(flow, io, 4);
    expect(metrics.counters.get("families_lost")).toBe(1);
    expect(flow.snapshot!()).toEqual([[1, "rt-1-3"]]);
  });

  it("continues from a restored checkpoint instead of reusing the seed token", async () => {
    const { io, sent } = scriptedIO(rotateOnce);
    const flow = refresh.create(context(families(2)));
    flow.restore!([
      [0, "rt-0-7"],
      [1, "rt-1-4"],
    ]);
    await iterate(flow, io, 2);
    expect(sent.map((s) => new URLSearchParams(s.request.body!).get("refresh_token"))).toEqual(["rt-0-7", "rt-1-4"]);
  });
});

describe("silent auth", () => {
  const sessions: SeedData = { kind: "sessions", entries: [{ session_id: "s1", user_id: "u1" }] };

  it("succeeds on a 302 with a code and the state it sent, and fails on a wrong state", async () => {
    let lie = false;
    const { io, metrics, sent } = scriptedIO((_, r) => {
      const state = new URL(r.url).searchParams.get("state");
      return { status: 302, location: `http://127.0.0.1/cb?code=abc&state=${lie ? "other" : state}` };
    });
    const flow = silentAuth.create(context(sessions));
    await iterate(flow, io, 2);
    lie = true;
    await iterate(flow, io, 1);
    const url = new URL(sent[0]!.request.url);
    expect(url.searchParams.get("prompt")).toBe("none");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(sent[0]!.request.headers!.cookie).toBe("authrim_session=s1");
    expect(sent[0]!.request.redirect).toBe("manual");
    expect(metrics.rates.get("silent_auth_success")).toEqual([2, 3]);
  });

  it.each([
    // [the provider's error, what it means]
    ["login_required", "the session is unknown to the provider"],
    ["consent_required", "the client is not trusted or does not skip consent"],
  ])("counts %s (%s)", async (error) => {
    const { io, metrics } = scriptedIO(() => ({ status: 302, location: `http://127.0.0.1/cb?error=${error}&state=x` }));
    await iterate(silentAuth.create(context(sessions)), io, 2);
    expect(metrics.counters.get(error)).toBe(2);
  });
});

describe("otp login", () => {
  const users: SeedData = { kind: "users", entries: [{ email: "a@test", userId: "u1" }] };
  const provider = (failAt: number | null) => (step: number, r: FlowRequest) => {
    if (step === failAt) return { status: 400, json: { error: "nope" } };
    switch (step) {
      case 0:
        return { status: 302, location: "/login?challenge_id=ch1" }; // no cookie, as Authrim v0.1.15
      case 1:
        return { status: 201, json: { code: "123456", otpSessionId: "otp1" } };
      case 2:
        // Set URL-encoded, as Authrim's setCookie does.
        return { setCookie: "authrim_session=ses%3Aabc; Path=/", json: { success: true, sessionId: "ses:abc" } };
      case 3:
        return { status: 302, location: `http://127.0.0.1/cb?code=c1&state=${new URL(r.url).searchParams.get("state")}` };
      default:
        return { json: { access_token: "at" } };
    }
  };

  it("runs the five steps in order, carrying cookies, code and PKCE verifier", async () => {
    const { io, metrics, sent } = scriptedIO(provider(null));
    await iterate(otpLogin.create(context(users)), io, 1);
    expect(sent.map((s) => s.step)).toEqual([0, 1, 2, 3, 4]);
    expect(sent[1]!.request.headers!.authorization).toBe("Bearer adm");
    expect(sent[2]!.request.headers!.cookie).toBe("authrim_otp_session=otp1");
    expect(JSON.parse(sent[2]!.request.body!)).toEqual({ email: "a@test", code: "123456" });
    expect(sent[2]!.request.url).toBe("http://127.0.0.1:9/api/auth/email-codes/verify");
    // Sent decoded: Authrim reads the raw header.
    expect(sent[3]!.request.headers!.cookie).toBe("authrim_session=ses:abc");
    const token = new URLSearchParams(sent[4]!.request.body!);
    expect(token.get("code")).toBe("c1");
    expect(token.get("code_verifier")!.length).toBeGreaterThanOrEqual(43);
    expect(metrics.rates.get("otp_login_success")).toEqual([1, 1]);
    expect(metrics.trends.get("otp_login_duration")!.count).toBe(1);
  });

  it("stops at the first failed step and records the flow as failed", async () => {
    const { io, metrics, sent } = scriptedIO(provider(2));
    await iterate(otpLogin.create(context(users)), io, 1);
    expect(sent.map((s) => s.step)).toEqual([0, 1, 2]);
    expect(metrics.rates.get("otp_login_success")).toEqual([0, 1]);
    expect(metrics.counters.get("otp_login_failed_step")).toBe(1);
    // The step is named, and the provider's error with it.
    expect(metrics.counters.get("otp_login_failed_step{step:verify}")).toBe(1);
    expect(metrics.counters.get("otp_login_failed_step{step:verify,error:nope}")).toBe(1);
    expect(metrics.trends.has("otp_login_duration")).toBe(false);
  });

  it("names the silent authorize step and the provider's consent_required when the client is not trusted", async () => {
    const { io, metrics, sent } = scriptedIO((step, r) =>
      step === 3
        ? { status: 302, location: `http://127.0.0.1/cb?error=consent_required&state=${new URL(r.url).searchParams.get("state")}` }
        : provider(null)(step, r),
    );
    await iterate(otpLogin.create(context(users)), io, 1);
    expect(sent.map((s) => s.step)).toEqual([0, 1, 2, 3]);
    expect(metrics.counters.get("otp_login_failed_step{step:authorize_silent,error:consent_required}")).toBe(1);
  });
});
