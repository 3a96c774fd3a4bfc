/**
 * k6/browser in a script, on the Node side: bundling lets the built subset through and
 * refuses the k6 calls not built yet at start, naming each with its file and line (also in a
 * helper module that does not import k6/browser); a scenario's browser option is accepted
 * for Chromium only; and the VU's proxies send each call to the host as the shard expects it
 * (runtime/browser-wire.ts), answering page.url() from what came back.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleScript } from "./bundle.ts";
import { scenarioOptionsProblems } from "./browser-options.ts";
import { unbuiltBrowserCalls } from "./browser-refusals.ts";
import type { BrowserCall, BrowserHostApi } from "./runtime/browser-wire.ts";
import { CookieJar } from "./runtime/cookie-jar.ts";
import { createVuModules, type VuContext } from "./runtime/vu-modules.ts";
import type { IterationHost } from "./runtime/wire.ts";
import { noSockets } from "../test/support/no-sockets.ts";

const dir = mkdtempSync(join(tmpdir(), "k6-browser-"));
function file(name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

const SUPPORTED = `import { browser } from "k6/browser";
import { check } from "k6";
export const options = { scenarios: { ui: { executor: "shared-iterations", options: { browser: { type: "chromium" } } } } };
export default async function () {
  const page = await browser.newPage();
  try {
    await page.goto(__ENV.BASE_URL + "/app/sign-in");
    await page.locator("#email").fill("a@b.c");
    await page.locator("#password").type("pw");
    await page.keyboard.press("Enter");
    const shot = await page.screenshot();
    check(await page.locator("#status").textContent(), { "signed in": (t) => t.includes("a@b.c") });
    check(shot, { png: (b) => b.byteLength > 0 });
  } finally {
    await page.close();
  }
}
`;

describe("bundling a k6/browser script", () => {
  it("lets the built subset through", async () => {
    const bundled = await bundleScript(file("supported.js", SUPPORTED));
    expect(bundled.ok ? [] : bundled.problems).toEqual([]);
  });

  it("refuses the calls not built yet before any load, naming each call, file and line, also in a helper module", async () => {
    file("helper.js", 'export async function submit(page) {\n  await page.setInputFiles("#file", []);\n}\n');
    const script = file(
      "unbuilt.js",
      'import { browser } from "k6/browser";\nimport { submit } from "./helper.js";\nexport default async function () {\n  const page = await browser.newPage();\n  await page.addInitScript("1");\n  page.on("request", () => {});\n  await submit(page);\n  await page.exposeFunction("f", () => 1);\n}\n',
    );
    const bundled = await bundleScript(script);
    expect(bundled.ok).toBe(false);
    if (bundled.ok) return;
    expect(bundled.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/unbuilt\.js:5: k6\/browser's \.addInitScript\(\): not built/),
        expect.stringMatching(/unbuilt\.js:8: k6\/browser's \.exposeFunction\(\): not built/),
        expect.stringMatching(/helper\.js:2: k6\/browser's \.setInputFiles\(\): not built/),
      ]),
    );
    expect(bundled.problems).toHaveLength(3);
  });

  it("looks for them only in browser scripts", async () => {
    const bundled = await bundleScript(file("not-browser.js", "const o = { waitForResponse() {} };\nexport default function () { o.waitForResponse(); }\n"));
    expect(bundled.ok).toBe(true);
  });
});

describe("unbuiltBrowserCalls", () => {
  it.each([
    // Names other objects have too: a socket's events, an array's filter, Promise.all.
    ['socket.on("open", () => {});', []],
    ["[1].filter(Boolean); Promise.all([]);", []],
    // Built: the page's events, its touchscreen, routes and throttling (issue 52).
    ['page.on("request", () => {}); page.on("requestfailed", (r) => r.failure());', []],
    ['page.touchscreen.tap(1, 2); page.route(/x/, (r) => r.abort()); page.throttleCPU({ rate: 2 }); page.throttleNetwork(networkProfiles["Slow 3G"]);', []],
    // Built: the console event, the mouse, waiting for a navigation, getBy… locators.
    ['page.on("console", () => {}); page.mouse.click(1, 2); page.waitForNavigation(); page.getByRole("link");', []],
    // An unbuilt call, refused.
    ['page.setInputFiles("#f", []);', ["f.js:1: k6/browser's .setInputFiles(): not built in edgeload's k6/browser yet"]],
    // TypeScript esbuild has not stripped yet: left to the runtime's proxy, not misread.
    ['const p: Page = x; p.addInitScript("1");', []],
    // Built: the waits on what the page does; waitForEvent without a predicate, or with one named by a variable (the proxy refuses it when called).
    [
      'page.waitForResponse(/api/); page.waitForRequest("http://t/a"); page.waitForFunction(() => true); page.waitForEvent("console", { timeout: 1 }); page.waitForEvent("request", check);',
      [],
    ],
    // waitForEvent with a predicate written there: a function, or options with one, built.
    ['page.waitForEvent("response", (r) => r.ok()); context.waitForEvent("page", { predicate: isApi, timeout: 5 });', []],
  ] as const)("%s → %j", (source, expected) => {
    expect(unbuiltBrowserCalls(source, "f.js")).toEqual(expected);
  });
});

describe("a scenario's browser option", () => {
  it.each([
    [{ browser: { type: "chromium" } }, []],
    [{ browser: { type: "firefox" } }, ['s.options.browser.type: "chromium" is the browser k6 and Browser Run drive (got "firefox")']],
    [{ browser: {} }, ['s.options.browser.type: "chromium" is the browser k6 and Browser Run drive (got undefined)']],
    [{ browser: { type: "chromium" }, other: 1 }, ["s.options.other: not supported by edgeload (k6 reads only browser here)"]],
    ["chromium", ['s.options: an object, as { browser: { type: "chromium" } }']],
  ] as const)("%j → %j", (value, problems) => {
    expect(scenarioOptionsProblems("s.options", value)).toEqual(problems);
  });
});

/** A locator step of page.locator(selector). */
const locator = (selector: string) => ({ by: "locator", args: [selector] });

/** A VU over a host that answers browser calls as the shard would, recording them. */
function browserVu(withHost = true) {
  const calls: BrowserCall[] = [];
  const slept: number[] = [];
  const declared: string[] = [];
  let handle = 0;
  const host: IterationHost & BrowserHostApi = {
    send: () => Promise.reject(new Error("no requests here")),
    async sleep(_samples, ms) {
      slept.push(ms);
    },
    ...noSockets,
    async browser(_samples, call) {
      calls.push(call);
      if (call.method === "newPage") return { value: ++handle, url: "about:blank", context: 40 + handle };
      if (call.method === "$") return { value: call.args[0] === "#none" ? null : 70 + handle, url: "about:blank" };
      if (call.method === "evaluate" && call.args[0] === "() => console.log('hi', 42)")
        return { value: undefined, events: [{ page: 1, event: "console", type: "log", text: "hi 42", args: ["hi", 42] }] };
      if (call.method === "goto") return { value: { status: 200, statusText: "OK", url: String(call.args[0]), headers: {} }, url: String(call.args[0]) };
      if (call.method === "textContent") return { value: "Signed in", url: "http://t/app/sign-in" };
      // The waits answer what they waited for, as data (workers/shard/browser-waits.ts).
      if (call.method === "newContext")
        return { value: 30, browser: { userAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0 Safari/537.36", version: "120.0.6099.28" } };
      // A function that returns an element answers its handle; any other, its value.
      if (call.method === "waitForFunction" && call.args[0] === "document.querySelector('h1')") return { value: { kind: "element", element: 90 } };
      if (call.method === "waitForFunction") return { value: { kind: "value", value: { ready: true } }, url: "http://t/app" };
      if (call.method === "waitForResponse") return { value: { status: 201, statusText: "Created", url: "http://t/api/items", headers: { "x-id": "7" } } };
      if (call.method === "waitForRequest" || (call.method === "waitForEvent" && call.args[0] === "request"))
        return { value: { url: "http://t/api/items", method: "POST", headers: {}, postData: "{}", resourceType: "fetch", isNavigationRequest: false } };
      if (call.method === "waitForEvent") return { value: { type: "warning", text: "slow", args: ["slow"] } };
      return { value: undefined, url: "http://t/app/sign-in#done" };
    },
  };
  const context: VuContext = {
    id: 2,
    iteration: 4,
    iterationInTest: 0,
    scenario: { name: "ui", executor: "shared-iterations", startTimeMs: 0 },
    samples: [],
    host: withHost ? host : null,
    jar: new CookieJar(),
    shared: new Map(),
    // A time's name with its unit: CLS is a score, the failure rate a rate.
    declare: (name, _type, isTime) => declared.push(isTime ? `${name} (ms)` : name),
  };
  const modules = createVuModules(context) as Record<string, any>;
  return { modules, calls, slept, declared };
}

describe("the VU's k6/browser", () => {
  it("declares k6's browser metrics only when the script imports it", () => {
    const vu = browserVu(false);
    expect(vu.declared).toEqual([]);
    void vu.modules["k6/browser"];
    expect(vu.declared).toEqual([
      "browser_web_vital_ttfb (ms)",
      "browser_web_vital_fcp (ms)",
      "browser_web_vital_lcp (ms)",
      "browser_web_vital_inp (ms)",
      "browser_web_vital_cls",
      "browser_http_req_duration (ms)",
      "browser_http_req_failed",
      "browser_data_sent",
      "browser_data_received",
    ]);
  });

  it("sends each call to the host by handle, and answers page.url() from what came back", async () => {
    const { modules, calls, slept } = browserVu();
    const { browser } = modules["k6/browser"];
    const page = await browser.newPage();
    expect(page.url()).toBe("about:blank");
    const response = await page.goto("http://t/app/sign-in", { waitUntil: "load" });
    expect([response.status(), response.ok(), page.url()]).toEqual([200, true, "http://t/app/sign-in"]);
    await page.locator("form").locator("#email").fill("a@b.c");
    await page.keyboard.press("Enter");
    expect(await page.locator("#status").first().textContent()).toBe("Signed in");
    await page.evaluate((n: number) => n + 1, 41);
    await page.waitForTimeout(250);
    // A click or a script may move the page: each call brings its URL back.
    expect(page.url()).toBe("http://t/app/sign-in#done");
    expect(calls.map((c) => [c.target, c.method, c.args])).toEqual([
      [{ kind: "browser" }, "newPage", []],
      [{ kind: "page", page: 1 }, "goto", ["http://t/app/sign-in", { waitUntil: "load" }]],
      [{ kind: "locator", page: 1, steps: [locator("form"), locator("#email")] }, "fill", ["a@b.c"]],
      [{ kind: "keyboard", page: 1 }, "press", ["Enter"]],
      [{ kind: "locator", page: 1, steps: [locator("#status"), { by: "first", args: [] }] }, "textContent", []],
      [{ kind: "page", page: 1 }, "evaluate", ["(n) => n + 1", true, 41]],
    ]);
    // page.waitForTimeout is the VU's think time, on the shard's clock.
    expect(slept).toEqual([250]);
  });

  it("crosses the waits on what the page does, and makes k6's objects of what they bring back", async () => {
    const { modules, calls } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    const handle = await page.waitForFunction((min: number) => document.querySelectorAll("li").length >= min, { polling: "mutation" }, 3);
    expect(await handle.jsonValue()).toEqual({ ready: true });
    const response = await page.waitForResponse(/\/api\/items$/, { timeout: 500 });
    // k6 answers headerValue with a promise.
    expect([response.status(), response.ok(), response.url(), await response.headerValue("X-Id")]).toEqual([201, true, "http://t/api/items", "7"]);
    const request = await page.waitForRequest("http://t/api/items");
    expect([request.method(), request.postData(), request.resourceType(), request.isNavigationRequest()]).toEqual(["POST", "{}", "fetch", false]);
    expect((await page.waitForEvent("request")).url()).toBe("http://t/api/items");
    const message = await page.waitForEvent("console", { timeout: 100 });
    expect([message.type(), message.text(), message.page() === page]).toEqual(["warning", "slow", true]);
    expect(calls.slice(1).map((c) => [c.method, c.args])).toEqual([
      // The function's source and that it is one, k6's options, then its arguments.
      ["waitForFunction", ['(min) => document.querySelectorAll("li").length >= min', true, { polling: "mutation" }, 3]],
      ["waitForResponse", [{ $regexp: "\\/api\\/items$", flags: "" }, { timeout: 500 }]],
      ["waitForRequest", ["http://t/api/items"]],
      ["waitForEvent", ["request"]],
      ["waitForEvent", ["console", { timeout: 100 }]],
    ]);
  });

  it("names a k6 call not built yet when the script reaches it, and refuses a function argument", async () => {
    const { modules } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    expect(() => page.exposeFunction).toThrow("k6/browser's page.exposeFunction: not built in edgeload's k6/browser yet");
    await expect(page.waitForResponse(42)).rejects.toThrow("k6/browser's page.waitForResponse(): the URL to wait for must be a string or a RegExp, not number");
    expect(() => page.on("dialog", () => {})).toThrow(
      `k6/browser's page.on("dialog"): k6 has the page events "metric", "console", "request", "response", "requestfinished", "requestfailed"`,
    );
    await expect(page.click("#a", () => {})).rejects.toThrow("page.click(): a function cannot cross to the browser here");
    // What an await or a check reads of any object is still plain JavaScript.
    expect(page.then).toBeUndefined();
  });

  it("sends a locator as the steps that made it: getBy…, filter, a RegExp as its source and flags, a locator argument as its steps", async () => {
    const { modules, calls } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    const heading = page.locator("h3");
    await page
      .getByRole("listitem")
      .filter({ hasNotText: /Product 2/i, has: heading })
      .first()
      .textContent();
    await page.getByText(/Your bet: .*/).isVisible();
    await page.frameLocator("#frame").getByRole("button", { name: "Submit" }).click();
    await page.locator("ul").contentFrame().locator("li").nth(2).isVisible();
    expect(calls.slice(1).map((c) => c.target)).toEqual([
      {
        kind: "locator",
        page: 1,
        steps: [
          { by: "getByRole", args: ["listitem"] },
          { by: "filter", args: [{ hasNotText: { $regexp: "Product 2", flags: "i" }, has: { $locator: [locator("h3")] } }] },
          { by: "first", args: [] },
        ],
      },
      { kind: "locator", page: 1, steps: [{ by: "getByText", args: [{ $regexp: "Your bet: .*", flags: "" }] }] },
      {
        kind: "locator",
        page: 1,
        steps: [
          { by: "frameLocator", args: ["#frame"] },
          { by: "getByRole", args: ["button", { name: "Submit" }] },
        ],
      },
      { kind: "locator", page: 1, steps: [locator("ul"), { by: "contentFrame", args: [] }, locator("li"), { by: "nth", args: [2] }] },
    ]);
    // A frame locator only finds: an action on it is named, not sent.
    expect(() => page.frameLocator("#frame").click).not.toThrow();
    expect(page.frameLocator("#frame").click).toBeUndefined();
  });

  it("answers page.$ with an element handle whose calls name it, or null; page.context() with the page's context; the mouse by page", async () => {
    const { modules, calls } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    expect(await page.$("#none")).toBeNull();
    const element = await page.$(".checked");
    await element.setChecked(false);
    await page.context().cookies("http://a.test", "http://b.test");
    await page.mouse.click(10, 20);
    await page.evaluate((x: number, y: number) => x * y, 5, 5);
    expect(calls.slice(1).map((c) => [c.target, c.method, c.args])).toEqual([
      [{ kind: "page", page: 1 }, "$", ["#none"]],
      [{ kind: "page", page: 1 }, "$", [".checked"]],
      [{ kind: "element", page: 1, element: 71 }, "setChecked", [false]],
      // The context newPage answered with: browser.newPage() made it.
      [{ kind: "context", context: 41 }, "cookies", ["http://a.test", "http://b.test"]],
      [{ kind: "mouse", page: 1 }, "click", [10, 20]],
      // Every argument after the function crosses (k6's evaluate takes any number).
      [{ kind: "page", page: 1 }, "evaluate", ["(x, y) => x * y", true, 5, 5]],
    ]);
  });

  it("tells the shard of a console handler once, with the next call, and hands it each message that comes back", async () => {
    const { modules, calls } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    const seen: unknown[] = [];
    page.on("console", async (msg: any) => seen.push([msg.type(), msg.text(), await msg.args()[1].jsonValue(), msg.page() === page]));
    await page.evaluate("() => console.log('hi', 42)");
    await page.title();
    expect(calls.slice(1).map((c) => c.listen)).toEqual([[{ page: 1, event: "console" }], undefined]);
    expect(seen).toEqual([["log", "hi 42", 42, true]]);
    expect(() => page.on("console", "not a function")).toThrow('page.on("console", handler): the handler must be a function');
  });

  it('sends a page.on("metric") handler\'s tag rules with the next call, RegExps as their source, a bad rule left out', async () => {
    const { modules, calls } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    page.on("metric", (metric: any) => {
      metric.tag({ name: "search", matches: [{ url: /\?q=[0-9a-z]+$/, method: "get" }, { url: "/news" }] });
      // k6 logs these and tags nothing.
      metric.tag({ name: " ", matches: [{ url: /x/ }] });
      metric.tag({ name: "bad", matches: [{ url: /x/, method: "FETCH" }] });
    });
    await page.goto("http://t/?q=abc123");
    expect(calls[1]?.listen).toEqual([
      {
        page: 1,
        event: "metric",
        rules: [{ name: "search", matches: [{ url: { $regexp: "\\?q=[0-9a-z]+$", flags: "" }, method: "GET" }, { url: "/news" }] }],
      },
    ]);
  });

  it("answers waitForFunction with an element handle when the function returned an element, whose calls name the element", async () => {
    const { modules, calls } = browserVu();
    const page = await modules["k6/browser"].browser.newPage();
    const heading = await page.waitForFunction("document.querySelector('h1')", { polling: "mutation", timeout: 2000 });
    await heading.innerHTML();
    const value = await page.waitForFunction(() => ({ ready: true }));
    expect([await value.jsonValue(), value.asElement()]).toEqual([{ ready: true }, null]);
    expect(calls.slice(1).map((c) => [c.target, c.method])).toEqual([
      [{ kind: "page", page: 1 }, "waitForFunction"],
      [{ kind: "element", page: 1, element: 90 }, "innerHTML"],
      [{ kind: "page", page: 1 }, "waitForFunction"],
    ]);
  });

  it("answers browser.userAgent() and version() at once from what the first context's answer told, and context.browser() with the browser", async () => {
    const { modules } = browserVu();
    const { browser } = modules["k6/browser"];
    // Before any context the VU has not heard from its browser: named, not a wrong answer.
    expect(() => browser.userAgent()).toThrow(
      "k6/browser's browser.userAgent(): edgeload's VU learns its browser's user agent when it opens its first context or page (browser.newContext() or newPage()); call it after one",
    );
    expect(() => browser.version()).toThrow("learns its browser's version");
    const context = await browser.newContext();
    expect(context.browser()).toBe(browser);
    expect([context.browser().userAgent(), browser.version()]).toEqual(["Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0 Safari/537.36", "120.0.6099.28"]);
  });
});

describe("k6/browser's devices", () => {
  it("has k6 v1.8.1's 71 descriptors, a landscape twin beside each but the Lumia 550, each VU its own copy", () => {
    const { devices } = browserVu().modules["k6/browser"];
    expect(Object.keys(devices)).toHaveLength(71);
    expect(devices["iPhone X"]).toEqual({
      name: "iPhone X",
      userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 11_0 like Mac OS X) AppleWebKit/604.1.38 (KHTML, like Gecko) Version/11.0 Mobile/15A372 Safari/604.1",
      viewport: { width: 375, height: 812 },
      deviceScaleFactor: 3,
      isMobile: true,
      hasTouch: true,
    });
    // A twin: its width and height swapped, the rest the same.
    expect(devices["Nexus 5X landscape"]).toMatchObject({ name: "Nexus 5X landscape", viewport: { width: 732, height: 412 }, deviceScaleFactor: 2.625 });
    expect([devices["Microsoft Lumia 550"]?.viewport, devices["Microsoft Lumia 550 landscape"]]).toEqual([{ width: 640, height: 360 }, undefined]);
    devices["iPhone X"].viewport.width = 1;
    expect(browserVu().modules["k6/browser"].devices["iPhone X"].viewport.width).toBe(375);
  });

  it("crosses a descriptor given to newContext as the context's options, as k6's device_emulation example gives it", async () => {
    const { modules, calls } = browserVu();
    const { browser, devices } = modules["k6/browser"];
    await browser.newContext(Object.assign({ locale: "es-ES" }, devices["iPhone X"]));
    expect(calls[0]?.args).toEqual([{ locale: "es-ES", ...devices["iPhone X"] }]);
  });
});
