/**
 * Where the public k6 corpus's requests go (issue 53): corpus.json's placeholders filled for
 * the real httpbin and for the look-alikes, the target column docs/k6.md's table derives from
 * them, and httpbin.org's own program started and stopped on loopback
 * (test/support/k6-corpus/real-targets.ts). The corpus itself runs in k6-corpus.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSources, targetsOf } from "../support/k6-corpus/docs-table.ts";
import { findHttpbin, type RealTarget, startHttpbin } from "../support/k6-corpus/real-targets.ts";
import { type CorpusTargets, startCorpusTargets } from "../support/k6-corpus/targets.ts";
import { fill, readManifest } from "../support/k6-corpus/run-corpus.ts";
import { describeWithBinary } from "../support/required-binaries.ts";

const origins = { httpbin: "http://127.0.0.1:4001", lookAlike: "http://127.0.0.1:4002" };

describe("corpus.json's placeholders", () => {
  it.each([
    // The real httpbin: the scripts written against httpbin.org.
    ["{httpbin}/post", "http://127.0.0.1:4001/post"],
    ["http://user:passwd@{httpbin-host}/basic-auth", "http://user:passwd@127.0.0.1:4001/basic-auth"],
    // The look-alikes: QuickPizza, test-api.k6.io, the echo WebSocket.
    ["{origin}/test.k6.io/", "http://127.0.0.1:4002/test.k6.io/"],
    ["{host}", "127.0.0.1:4002"],
    ["{ws}/echo", "ws://127.0.0.1:4002/echo"],
    // In a script's args: a WebSocket base for -e BASE_URL.
    ["BASE_URL={ws}", "BASE_URL=ws://127.0.0.1:4002"],
    // Not a placeholder: a literal object in a script's options stays as it is.
    ["{ duration: '1s', target: 2 }", "{ duration: '1s', target: 2 }"],
  ])("fills %s as %s", (to, filled) => {
    expect(fill(to, origins, "k6")).toBe(filled);
  });

  it("reads the jslib modules by path under k6 and by their https URL under edgeload", () => {
    expect(fill("{jslib}/k6-utils/1.1.0/index.js", origins, "k6")).toMatch(/^file:\/\/\/.*\/modules\/jslib\.k6\.io\/k6-utils\/1\.1\.0\/index\.js$/);
    expect(fill("{jslib}/k6-utils/1.1.0/index.js", origins, "edgeload")).toBe("https://jslib.k6.io/k6-utils/1.1.0/index.js");
  });

  it("refuses a placeholder it does not know, naming it", () => {
    expect(() => fill("{quickpizza}/api/pizza", origins, "edgeload")).toThrow(/unknown placeholder \{quickpizza\}/);
  });

  it("fills every substitution of the corpus", async () => {
    const manifest = await readManifest();
    for (const script of manifest.scripts) for (const s of script.substitutions) expect(() => fill(s.to, origins, "k6"), script.name).not.toThrow();
  });
});

describe("the target column of docs/k6.md's corpus table", () => {
  it.each([
    // httpbin.org's URLs (and its userinfo form) go to the real httpbin.
    ["k6-http-basic-auth", { httpbin: true, lookAlikes: [] }],
    // One script, two services: httpbin and QuickPizza's test.k6.io page.
    ["k6-es6sample", { httpbin: true, lookAlikes: ["quickpizza.grafana.com"] }],
    // QuickPizza's own scripts reach it through -e BASE_URL, with no substitution.
    ["qp-basic", { httpbin: false, lookAlikes: ["quickpizza.grafana.com"] }],
    ["ts-template-get-200", { httpbin: false, lookAlikes: ["test-api.k6.io"] }],
    ["k6-websockets-echo", { httpbin: false, lookAlikes: ["echo.websocket.org"] }],
    // -e BASE_URL stands for the service its default names: test-api.k6.io's own scripts, its wss:// chat too.
    ["testapi-api-demo", { httpbin: false, lookAlikes: ["test-api.k6.io"] }],
    ["testapi-ws-demo", { httpbin: false, lookAlikes: ["test-api.k6.io"] }],
    ["testk6-website", { httpbin: false, lookAlikes: ["test.k6.io"] }],
    // No request at all.
    ["k6-base64", { httpbin: false, lookAlikes: [] }],
  ])("%s reaches %j", async (name, expected) => {
    const manifest = await readManifest();
    const script = manifest.scripts.find((s) => s.name === name);
    if (!script) throw new Error(`${name} is not in corpus.json`);
    expect(targetsOf(script, readSources(manifest).get(name) ?? "")).toEqual(expected);
  });

  it("knows the service behind every look-alike host a script names", async () => {
    const manifest = await readManifest();
    const sources = readSources(manifest);
    for (const script of manifest.scripts) expect(() => targetsOf(script, sources.get(script.name) ?? ""), script.name).not.toThrow();
  });

  it("names the host it does not know", () => {
    const script = { name: "x", substitutions: [{ from: "https://example.net", to: "{origin}" }] };
    expect(() => targetsOf(script as never, "")).toThrow(/no service at example\.net/);
  });
});

describe("the look-alikes of test-api.k6.io and test.k6.io (as their programs answer the corpus's scripts)", () => {
  let targets: CorpusTargets;
  beforeAll(async () => {
    targets = await startCorpusTargets();
  });
  afterAll(() => targets?.stop());
  const at = (path: string, init: RequestInit = {}) => fetch(`${targets.origin}${path}`, { redirect: "manual", ...init });
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });

  it("redirects a path without its slash as Django's APPEND_SLASH does (301), and lists the public crocodiles with their age", async () => {
    const moved = await at("/public/crocodiles?x=1");
    expect([moved.status, moved.headers.get("location")]).toEqual([301, "/public/crocodiles/?x=1"]);
    const crocodiles = (await (await at("/public/crocodiles/")).json()) as { id: number; age: number }[];
    expect(crocodiles.map((c) => c.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(crocodiles.every((c) => c.age > 7)).toBe(true);
  });

  it("authenticates as REST framework does: 401 with a Basic challenge, then Basic, bearer and session cookie each let a user in", async () => {
    const anonymous = await at("/my/crocodiles/");
    expect([anonymous.status, anonymous.headers.get("www-authenticate")]).toEqual([401, 'Basic realm="api"']);
    const basic = await at("/my/crocodiles/", { headers: { authorization: `Basic ${btoa("user:test123!")}` } });
    expect(basic.status).toBe(200);
    const { access } = (await (await at("/auth/token/login/", form({ username: "user", password: "test123!" }))).json()) as { access: string };
    const created = await at("/my/crocodiles/", form({ name: "Croc", sex: "M", date_of_birth: "2019-01-01" }, { authorization: `Bearer ${access}` }));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const login = await at("/auth/cookie/login/", form({ username: "user", password: "test123!" }));
    expect(((await login.json()) as { email: string }).email).toBe("user@example.com");
    const session = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect((await at(`/my/crocodiles/${id}/`, { method: "DELETE", headers: { cookie: session } })).status).toBe(204);
    expect((await at(`/my/crocodiles/${id}/`, { headers: { cookie: session } })).status).toBe(404);
  });

  it("refuses to register a user the public service has long had (api_demo.js's setup), as it does", async () => {
    const again = await at("/user/register/", form({ username: "nkjshjkcckjhxewewjfhxkjqehnqlx@example.com", password: "secret" }));
    expect(again.status).toBe(400);
  });

  it("logs in on test.k6.io only with the csrf cookie's token, redirecting to the messages of the user (302), and refuses another token (403)", async () => {
    const page = await at("/my_messages.php");
    const csrf = /csrf=([^;]+)/.exec(page.headers.get("set-cookie") ?? "")?.[1] ?? "";
    expect(await page.text()).toContain(`name="csrftoken" value="${csrf}"`);
    const login = await at("/login.php", form({ login: "admin", password: "123", redir: "1", csrftoken: csrf }, { cookie: `csrf=${csrf}` }));
    expect([login.status, login.headers.get("location")]).toEqual([302, "/my_messages.php"]);
    const cookies = login.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    expect(await (await at("/my_messages.php", { headers: { cookie: cookies } })).text()).toContain("Welcome, admin!");
    const forged = await at("/login.php", form({ login: "admin", password: "123", redir: "1", csrftoken: "other" }, { cookie: `csrf=${csrf}` }));
    expect(forged.status).toBe(403);
  });

  it("runs test-api.k6.io's chat: every event goes to the room, and LEAVE closes with 3000", async () => {
    const url = `${targets.origin.replace("http", "ws")}/ws/crocochat/room1/`;
    const seen: string[] = [];
    const ws = new WebSocket(url);
    const closed = new Promise<number>((resolve) => ws.addEventListener("close", (e) => resolve(e.code)));
    ws.addEventListener("message", (e) => {
      const event = JSON.parse(String(e.data)) as { event: string; user: string };
      seen.push(`${event.event} ${event.user}`);
      if (event.event === "NAME_CHANGE") ws.send(JSON.stringify({ event: "LEAVE" }));
    });
    ws.addEventListener("open", () => ws.send(JSON.stringify({ event: "SET_NAME", new_name: "Croc 1" })));
    expect(await closed).toBe(3000);
    expect(seen).toEqual(["USER_JOINED anonymous", "NAME_CHANGE Croc 1", "LEAVE Croc 1"]);
  });
});

describeWithBinary("HTTPBIN", "httpbin.org's own program on loopback", findHttpbin({ install: true }), (python) => {
  let httpbin: RealTarget;
  beforeAll(async () => {
    httpbin = await startHttpbin(python);
  }, 60_000);
  afterAll(() => httpbin?.stop());

  it("answers as httpbin.org does: a form field is a string, a repeated one a list (go-httpbin answers lists for both)", async () => {
    const res = await fetch(`${httpbin.origin}/post`, {
      method: "POST",
      body: "name=Test+Name&topping=onion&topping=bacon",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { form: Record<string, unknown> };
    expect(body.form).toEqual({ name: "Test Name", topping: ["onion", "bacon"] });
  });

  it("reports the Content-Type a request carried, and none when it carried none", async () => {
    const typed = (await (await fetch(`${httpbin.origin}/post`, { method: "POST", body: "x", headers: { "content-type": "text/plain" } })).json()) as {
      headers: Record<string, string>;
    };
    expect(typed.headers["Content-Type"]).toBe("text/plain");
    const untyped = (await (await fetch(`${httpbin.origin}/post`, { method: "POST", body: new Uint8Array([120]) })).json()) as {
      headers: Record<string, string>;
    };
    expect(untyped.headers["Content-Type"]).toBeUndefined();
  });

  it("stops: its port no longer answers", async () => {
    const other = await startHttpbin(python);
    await other.stop();
    await expect(fetch(`${other.origin}/get`)).rejects.toThrow();
  });
});
