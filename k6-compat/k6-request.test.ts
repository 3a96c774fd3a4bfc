/**
 * What a k6/http call sends and what `res.request` shows of it (runtime/k6-request.ts), against
 * what k6 v1.8.1 sends and shows for the same calls (an echo of the raw request, and
 * `JSON.stringify(res.request)`), and the VU's jar at each redirect the shard follows. The
 * whole request, byte for byte beside k6, is test/e2e/k6-wire.test.ts.
 */
import { describe, expect, it } from "vitest";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { digestAuthorization, digestChallenge } from "./runtime/digest-auth.ts";
import { K6_USER_AGENT, k6Request, type RequestInput } from "./runtime/k6-request.ts";
import { canonicalHeaderKey } from "./runtime/request-encoding.ts";
import { vuOptions } from "./runtime/vu-options.ts";
import { createVuModules } from "./runtime/vu-modules.ts";
import type { IterationHost, RedirectCookies, WireRequest, WireResponse } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";
import { vuContext } from "../test/support/vu-context.ts";

const input = (over: Partial<RequestInput>): RequestInput => ({
  method: "POST",
  url: "http://127.0.0.1/x",
  body: undefined,
  jar: new CookieJar(),
  userAgent: K6_USER_AGENT,
  ...over,
});
const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

describe("canonicalHeaderKey", () => {
  it.each([
    // Each letter after a hyphen upper-cased, the rest lower-cased, as Go's http.Header.Set stores it.
    ["x-request-ID", "X-Request-Id"],
    ["content-type", "Content-Type"],
    ["WWW-AUTHENTICATE", "Www-Authenticate"],
    // An underscore is not a word break for Go.
    ["x_custom_thing", "X_custom_thing"],
    // A name with a character outside RFC 9110's token is left as it is.
    ["bad name", "bad name"],
  ])("%s is %s", (name, canonical) => expect(canonicalHeaderKey(name)).toBe(canonical));
});

describe("k6Request", () => {
  it("sends a body as bytes and the headers k6 sends: canonical names, k6's User-Agent, no Content-Length or Host of the script's", () => {
    const r = k6Request(
      input({
        body: "héllo",
        headers: { "content-type": "text/csv", "x-k6": 3, "Content-Length": "99", Host: "example.com", "X-K6": "last wins" },
      }),
      "http.post()",
    );
    expect(r.body).toEqual(new TextEncoder().encode("héllo"));
    expect(r.headers).toEqual({ "Content-Type": "text/csv", "User-Agent": "Grafana k6/1.8.1", "X-K6": "last wins" });
    // res.request as k6 v1.8.1 shows it: Go's http.Header (values in lists), Host among them.
    expect(r.shown).toEqual({
      method: "POST",
      url: "http://127.0.0.1/x",
      headers: { "Content-Type": ["text/csv"], "User-Agent": ["Grafana k6/1.8.1"], "X-K6": ["last wins"], Host: ["example.com"] },
      body: "héllo",
      cookies: {},
    });
  });

  it.each([
    // No body: nothing sent, res.request.body "".
    [undefined, undefined, ""],
    [null, undefined, ""],
    // An object is a form, keys in Go's order.
    [{ z: 1, a: ["x", "y"] }, "a=x&a=y&z=1", "a=x&a=y&z=1"],
    // An ArrayBuffer as it is.
    [new Uint8Array([104, 105]).buffer, "hi", "hi"],
    // An empty string is an empty body (Content-Length: 0), not none.
    ["", "", ""],
  ])("body %j is sent as %j", (body, sent, shown) => {
    const r = k6Request(input({ body }), "http.post()");
    expect(text(r.body)).toBe(sent);
    expect(r.shown.body).toBe(shown);
  });

  it("sends no body for an empty one on a GET or HEAD, as Go sends none (and fetch would refuse one)", () => {
    expect(k6Request(input({ method: "GET", body: "" }), "http.request()").body).toBeUndefined();
    expect(k6Request(input({ method: "HEAD", body: new ArrayBuffer(0) }), "http.request()").body).toBeUndefined();
    expect(text(k6Request(input({ method: "GET", body: "a" }), "http.request()").body)).toBe("a");
  });

  it("labels a form only when the script did not: its own Content-Type wins, as params.headers is applied after the body", () => {
    expect(k6Request(input({ body: { a: 1 } }), "http.post()").headers["Content-Type"]).toBe("application/x-www-form-urlencoded");
    expect(k6Request(input({ body: { a: 1 }, headers: { "content-type": "x/y" } }), "http.post()").headers["Content-Type"]).toBe("x/y");
  });

  it("refuses a body k6 cannot send, naming the call", () => {
    expect(() => k6Request(input({ body: 5 }), "http.post()")).toThrow(
      "http.post(): a body is a string, an object (sent as a form) or an ArrayBuffer, not number",
    );
    expect(() => k6Request(input({ body: [1] }), "http.put()")).toThrow("not an array");
  });

  it("sends options.userAgent or the request's own; an empty one sends none but shows it, as k6 does", () => {
    expect(k6Request(input({ userAgent: "mine/1" }), "http.get()").headers["User-Agent"]).toBe("mine/1");
    expect(k6Request(input({ headers: { "user-agent": "req/2" } }), "http.get()").headers["User-Agent"]).toBe("req/2");
    const none = k6Request(input({ userAgent: "" }), "http.get()");
    expect(none.headers).not.toHaveProperty("User-Agent");
    expect(none.shown.headers["User-Agent"]).toEqual([""]);
  });

  it("shows the cookies sent as k6 does: the Cookie header, then params.cookies, then the jar's", () => {
    const jar = new CookieJar();
    jar.set("http://127.0.0.1/", "j", "1");
    const r = k6Request(input({ jar, headers: { Cookie: "h=2" }, cookies: { a: "1" } }), "http.get()");
    // k6 v1.8.1: {"Cookie":["h=2; a=1; j=1"]} and each cookie by name, replace false.
    expect(r.headers.Cookie).toBe("h=2; a=1; j=1");
    expect(r.shown.headers.Cookie).toEqual(["h=2; a=1; j=1"]);
    expect(r.shown.cookies).toEqual({
      h: [{ name: "h", value: "2", replace: false }],
      a: [{ name: "a", value: "1", replace: false }],
      j: [{ name: "j", value: "1", replace: false }],
    });
  });

  it("sends a URL's credentials as Basic authorization, which res.request's headers do not show (Go adds it when it sends)", () => {
    const r = k6Request(input({ url: "http://u:p@127.0.0.1/x" }), "http.get()");
    expect(r.url).toBe("http://127.0.0.1/x");
    expect(r.headers.Authorization).toBe(`Basic ${btoa("u:p")}`);
    expect(r.shown.headers).not.toHaveProperty("Authorization");
  });
});

describe("options.userAgent", () => {
  it("is read off the script's options, and refused when it is not a string", () => {
    expect(vuOptions({ userAgent: "mine/1" }).userAgent).toBe("mine/1");
    expect(vuOptions({})).not.toHaveProperty("userAgent");
    expect(() => vuOptions({ userAgent: 5 })).toThrow("options.userAgent must be a string, got 5");
  });
});

describe("the VU's jar across redirects", () => {
  function vu(respond: (r: WireRequest, hook: RedirectCookies | undefined) => Promise<Partial<WireResponse>>) {
    const hooks: Array<RedirectCookies | undefined> = [];
    const host: IterationHost = {
      async send(_samples, request, redirectCookies) {
        hooks.push(redirectCookies);
        const base = { status: 200, error: null, headers: {}, setCookies: [], body: "", durationMs: 1 };
        return { ...base, ...(await respond(request, redirectCookies)) };
      },
      async sleep() {},
      ...noSockets,
    };
    const context = vuContext(host);
    return { http: (createVuModules(context) as Record<string, any>)["k6/http"], context, hooks };
  }

  it("keeps each redirect's cookies and names the next hop's Cookie from the jar, as k6's CheckRedirect does", async () => {
    const next: Array<string | null> = [];
    const v = vu(async (_request, hook) => {
      // The shard followed /cookies/set → 302 (Set-Cookie: sid=1) → /cookies, which set more.
      next.push(await hook!({ fromUrl: "http://127.0.0.1/cookies/set", setCookies: ["sid=1; Path=/"], toUrl: "http://127.0.0.1/cookies" }));
      next.push(await hook!({ fromUrl: "http://127.0.0.1/cookies", setCookies: [], toUrl: "http://localhost/elsewhere" }));
      return { url: "http://127.0.0.1/cookies", setCookies: ["last=2; Path=/"] };
    });
    // The script's Cookie header is not sent again on a hop; its params.cookies are, as in k6.
    await v.http.get("http://127.0.0.1/cookies/set", { headers: { Cookie: "h=1" }, cookies: { own: "o" } });
    expect(next).toEqual(["own=o; sid=1", "own=o"]);
    // The final response's cookies belong to where the redirects led.
    expect(v.context.jar.cookiesForURL("http://127.0.0.1/")).toEqual({ sid: ["1"], last: ["2"] });
  });

  it("hands no hook with a request that follows no redirect", async () => {
    const v = vu(async () => ({}));
    await v.http.get("http://127.0.0.1/x", { redirects: 0 });
    await v.http.get("http://127.0.0.1/x");
    expect(v.hooks.map((h) => typeof h)).toEqual(["undefined", "function"]);
  });
});

describe("params.auth: digest (runtime/digest-auth.ts)", () => {
  it("answers RFC 2617's worked example (§3.5) with its response", () => {
    const challenge = digestChallenge(
      'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
    );
    const header = digestAuthorization(challenge!, { username: "Mufasa", password: "Circle Of Life" }, "GET", "/dir/index.html", "0a4f113b");
    expect(header).toContain('response="6629fae49393a05397450978507c4ef1"');
    expect(header).toContain('opaque="5ccc069c403ebaf9f0171e9517f40e41"');
    expect(header).toContain('qop=auth, nc=00000001, cnonce="0a4f113b"');
  });

  it.each([
    // Basic only: nothing to answer.
    ['Basic realm="api"', null],
    // Without a nonce a Digest challenge cannot be answered.
    ['Digest realm="r"', null],
    // After another scheme in the same header.
    ['Basic realm="a", Digest realm="r", nonce="n1"', { realm: "r", nonce: "n1" }],
  ])("reads %s as %j", (header, expected) => {
    expect(digestChallenge(header)).toEqual(expected);
  });

  it("sends first without credentials, then answers the 401's challenge once: two requests, as k6 counts them", async () => {
    const sent: (string | undefined)[] = [];
    const host: IterationHost = {
      async send(_samples, request): Promise<WireResponse> {
        sent.push(request.headers.Authorization);
        const base = { error: null, setCookies: [], body: "{}", durationMs: 1 };
        if (!request.headers.Authorization) return { ...base, status: 401, headers: { "WWW-Authenticate": 'Digest realm="me@x", nonce="abc", qop="auth"' } };
        return { ...base, status: 200, headers: {} };
      },
      async sleep() {},
      ...noSockets,
    };
    const http = (createVuModules(vuContext(host)) as Record<string, any>)["k6/http"];
    const res = await http.get("http://user:passwd@127.0.0.1/digest-auth/auth/user/passwd?x=1", { auth: "digest" });
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toBeUndefined();
    expect(sent[1]).toMatch(
      /^Digest username="user", realm="me@x", nonce="abc", uri="\/digest-auth\/auth\/user\/passwd\?x=1", algorithm=MD5, response="[0-9a-f]{32}", qop=auth, nc=00000001, cnonce="[0-9a-f]{16}"$/,
    );
  });
});
