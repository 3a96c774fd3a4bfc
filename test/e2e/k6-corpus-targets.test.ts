/**
 * Where the public k6 corpus's requests go (issue 53): corpus.json's placeholders filled for
 * the real httpbin and for the look-alikes, the target column docs/k6.md's table derives from
 * them, and httpbin.org's own program started and stopped on loopback
 * (test/support/k6-corpus/real-targets.ts). The corpus itself runs in k6-corpus.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSources, targetsOf } from "../support/k6-corpus/docs-table.ts";
import { findHttpbin, type RealTarget, startHttpbin } from "../support/k6-corpus/real-targets.ts";
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
