/**
 * The k6/browser calls the shard's browser host (workers/shard/browser-host.ts) replays on
 * Playwright's objects, on the local Browser Run binding's Chromium, as grafana/k6's browser
 * examples make them (test/fixtures/k6-browser-corpus/): locators from their steps (getBy…,
 * filter, a RegExp, a locator argument, frame locators), element handles (page.$) with k6's
 * element states, waitForNavigation with the navigation's web vitals, the mouse, a context's
 * cookies, evaluate with several arguments, and a listened page's console messages handed back
 * with the next answer. Pages are set with setContent, and the one navigation goes to the
 * local target, so nothing leaves loopback.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BrowserAnswer, BrowserCall, BrowserTarget, LocatorStep } from "../../k6-compat/runtime/browser-wire.ts";
import type { Sample } from "../../k6-compat/runtime/wire.ts";
import { BrowserHost } from "../../workers/shard/browser-host.ts";
import { ShardBrowser } from "../../workers/shard/browser-session.ts";

type Call = (target: BrowserTarget, method: string, args?: readonly unknown[], more?: Partial<BrowserCall>) => Promise<BrowserAnswer>;

/** A host on a fresh shard's session with one page of `html`: `body` gets the calls and the page's handle. */
async function withPage<T>(html: string, body: (call: Call, page: number, recorded: Sample[]) => Promise<T>): Promise<T> {
  const stub = env.LOAD_SHARD.get(env.LOAD_SHARD.idFromName(`browser-host-api-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const session = new ShardBrowser(env.BROWSER!, state.storage.kv);
    const recorded: Sample[] = [];
    const host = new BrowserHost(
      { newContext: () => session.newContext(), identity: () => session.identity(), saveScreenshot: async () => {} },
      () => null,
      (s) => recorded.push(...s),
    );
    const call: Call = (target, method, args = [], more = {}) => host.call({ target, method, args, ...more });
    try {
      const { value: page } = await call({ kind: "browser" }, "newPage");
      await call({ kind: "page", page: page as number }, "setContent", [html]);
      return await body(call, page as number, recorded);
    } finally {
      await host.close();
      await session.endInvocation(true);
    }
  });
}

const step = (by: LocatorStep["by"], ...args: unknown[]): LocatorStep => ({ by, args });
const regexp = (source: string, flags = "") => ({ $regexp: source, flags });

const PRODUCTS = `<ul>
  <li><h3>Product 1</h3><button>Add to cart 1</button></li>
  <li><h3>Product 2</h3><button>Add to cart 2</button></li>
</ul>
<p>Your bet: heads.</p>
<iframe id="frame" srcdoc="<h2>Inside iframe</h2><button id='submit-btn'>Submit</button>"></iframe>`;

describe("the browser host's k6/browser calls", () => {
  it("replays a locator's steps: getByRole, getByText with a RegExp, filter, locator with hasText, a locator argument, frame locators", async () => {
    const texts = await withPage(PRODUCTS, async (call, page) => {
      const text = async (...steps: LocatorStep[]) => (await call({ kind: "locator", page, steps }, "textContent")).value;
      return [
        await text(step("getByRole", "listitem"), step("filter", { hasText: "Product 2" }), step("first")),
        await text(step("getByRole", "listitem"), step("filter", { hasNotText: regexp("product 2", "i") }), step("first")),
        await text(step("getByRole", "list"), step("locator", "li", { hasText: "Product" }), step("locator", "button", { hasText: regexp("Add to cart 1") })),
        await text(step("getByText", regexp("Your bet: .*"))),
        // filter({ has }): the item that has an h3 reading "Product 1".
        await text(
          step("getByRole", "listitem"),
          step("filter", { has: { $locator: [step("getByText", "Product 1", { exact: true })] } }),
          step("locator", "button"),
        ),
        await text(step("frameLocator", "#frame"), step("locator", "#submit-btn")),
        await text(step("locator", "#frame"), step("contentFrame"), step("getByRole", "heading")),
        (await call({ kind: "locator", page, steps: [step("getByRole", "button", { name: "Add to cart 2" })] }, "count")).value,
      ];
    });
    expect(texts).toEqual([
      "Product 2Add to cart 2",
      "Product 1Add to cart 1",
      "Add to cart 1",
      "Your bet: heads.",
      "Add to cart 1",
      "Submit",
      "Inside iframe",
      1,
    ]);
  });

  it("keeps element handles from page.$ (CSS, XPath, null for none) and answers their states as k6 does", async () => {
    const html = `<header><h1 class="title">QuickPizza Legacy</h1></header>
      <div class="editable" editable>Edit me</div><input class="readonly" readonly>
      <input type="checkbox" class="unchecked"><div style="display:none" class="hidden"></div>`;
    const answers = await withPage(html, async (call, page) => {
      const $ = async (selector: string) => (await call({ kind: "page", page }, "$", [selector])).value as number | null;
      const on = async (element: number | null, method: string, ...args: unknown[]) =>
        (await call({ kind: "element", page, element: element! }, method, args)).value;
      const unchecked = await $(".unchecked");
      await on(unchecked, "setChecked", true);
      const box = (await on(await $("h1"), "boundingBox")) as { width: number; height: number };
      const title = await $("h1");
      await on(title, "dispose");
      return {
        css: await on(await $("header h1.title"), "textContent"),
        xpath: await on(await $('//header//h1[@class="title"]'), "textContent"),
        none: await $("#none"),
        // Playwright throws for a div; k6 answers: not disabled, no readonly attribute.
        editable: [await on(await $(".editable"), "isEditable"), await on(await $(".readonly"), "isEditable")],
        pageEditable: (await call({ kind: "page", page }, "isEditable", [".editable"])).value,
        hidden: await on(await $(".hidden"), "isHidden"),
        checked: await on(unchecked, "isChecked"),
        box: box.width > 0 && box.height > 0,
        disposed: await on(title, "textContent").catch((e: Error) => e.message),
      };
    });
    expect(answers).toEqual({
      css: "QuickPizza Legacy",
      xpath: "QuickPizza Legacy",
      none: null,
      editable: [true, false],
      pageEditable: true,
      hidden: true,
      checked: true,
      box: true,
      disposed: expect.stringMatching(/^element handle \d+ is disposed/),
    });
  });

  it("makes a page's input actions one by one: clicks a script starts at once each land on their own element", async () => {
    const boxes = Array.from({ length: 6 }, (_, i) => `<input type="checkbox" class="b${i}"${i % 2 ? " checked" : ""}>`).join("<br>");
    const states = await withPage(boxes, async (call, page) => {
      const handles = await Promise.all(Array.from({ length: 6 }, async (_, i) => (await call({ kind: "page", page }, "$", [`.b${i}`])).value as number));
      // As k6-utils' check() runs its predicates: every setChecked at once.
      await Promise.all(handles.map((element, i) => call({ kind: "element", page, element }, "setChecked", [i % 2 === 0])));
      return Promise.all(handles.map(async (element) => (await call({ kind: "element", page, element }, "isChecked")).value));
    });
    expect(states).toEqual([true, false, true, false, true, false]);
  });

  it("waits for the navigation a mouse click starts, answering its response and recording its web vitals", async () => {
    const url = `${env.TARGET_URL}/app/sign-in`;
    const { response, pageUrl, lcp } = await withPage(
      `<a href="${url}" style="display:block;width:200px;height:40px">sign in</a>`,
      async (call, page, recorded) => {
        const box = (await call({ kind: "locator", page, steps: [step("locator", "a")] }, "boundingBox")).value as {
          x: number;
          y: number;
          width: number;
          height: number;
        };
        // As the scripts do: the wait first, then the click, at once (Promise.all).
        const [navigation] = await Promise.all([
          call({ kind: "page", page }, "waitForNavigation"),
          call({ kind: "mouse", page }, "click", [box.x + box.width / 2, box.y + box.height / 2]),
        ]);
        const lcp = recorded.find((s) => s.type === "trend" && s.name === "browser_web_vital_lcp") as { tags?: Record<string, string> } | undefined;
        // page.url() after the wait: the page the click led to.
        return { response: navigation.value, pageUrl: navigation.url, lcp: lcp?.tags?.url };
      },
    );
    expect(response).toMatchObject({ status: 200, url });
    expect(pageUrl).toBe(url);
    expect(lcp).toBe(url);
  });

  it("gives a context's cookies as k6 asks for them: added, filtered by URLs given one by one, cleared", async () => {
    const cookies = await withPage("<p>cookies</p>", async (call, page) => {
      const { context } = await call({ kind: "browser" }, "newPage");
      const target: BrowserTarget = { kind: "context", context: context! };
      await call(target, "addCookies", [
        [
          { name: "foo", value: "42", url: "http://foo.com" },
          { name: "bar", value: "43", url: "https://bar.com" },
          { name: "baz", value: "44", url: "https://baz.com" },
        ],
      ]);
      const filtered = ((await call(target, "cookies", ["http://foo.com", "https://baz.com"])).value as { name: string }[]).map((c) => c.name);
      const all = ((await call(target, "cookies")).value as unknown[]).length;
      await call(target, "clearCookies");
      return { filtered, all, cleared: ((await call(target, "cookies")).value as unknown[]).length, page };
    });
    expect(cookies).toMatchObject({ filtered: ["foo", "baz"], all: 3, cleared: 0 });
  });

  it("evaluates a function with several arguments, and hands back a listened page's console messages with their values", async () => {
    const { product, answer, later, page } = await withPage("<p>console</p>", async (call, page) => {
      const product = (await call({ kind: "page", page }, "evaluate", ["(x, y) => x * y", true, 5, 5])).value;
      const answer = await call({ kind: "page", page }, "evaluate", ["() => console.log('a message', 42, { n: 1 })", true], {
        listen: [{ page, event: "console" }],
      });
      const later = await call({ kind: "page", page }, "title");
      return { product, answer, later, page };
    });
    expect(product).toBe(25);
    expect(answer.events).toEqual([{ page, event: "console", type: "log", text: "a message 42 {n: 1}", args: ["a message", 42, { n: 1 }] }]);
    // Each message goes once.
    expect(later.events).toBeUndefined();
  });
});

describe('the browser host\'s page.on("metric") rules', () => {
  it("gives a matching page's metrics the rule's name for their url and name tags, and leaves the others as they are", async () => {
    const base = `${env.TARGET_URL}/app/sign-in`;
    const recorded = await withPage("<p>start</p>", async (call, page, recorded) => {
      const rules = [
        { name: "never", matches: [{ url: regexp("q="), method: "POST" }] },
        { name: "sign-in search", matches: [{ url: regexp("sign-in\\?q=[0-9a-z]+$") }] },
      ];
      await call({ kind: "page", page }, "goto", [`${base}?q=abc123`], { listen: [{ page, event: "metric", rules }] });
      await call({ kind: "page", page }, "goto", [base]);
      return recorded;
    });
    const tagsOf = (name: string) =>
      (recorded as unknown as { name?: string; tags: Record<string, string> }[]).filter((s) => s.name === name).map((s) => [s.tags.url, s.tags.name]);
    // The POST rule does not match a GET; the second rule does, for the page's request and its vitals.
    expect(tagsOf("browser_http_req_duration")).toEqual([
      ["sign-in search", "sign-in search"],
      [base, undefined],
    ]);
    expect(tagsOf("browser_web_vital_lcp")).toEqual([
      ["sign-in search", "sign-in search"],
      [base, undefined],
    ]);
  });
});

describe("the browser host's INP and CLS", () => {
  /** A busy button, a link to `next` and a shift of the page's content, made in the page after it loaded. */
  const SHIFT_AND_BUSY_BUTTON = `(next) => {
    const button = document.createElement("button");
    button.id = "busy";
    button.textContent = "busy";
    button.onclick = () => { const end = performance.now() + 150; while (performance.now() < end) {} };
    const link = document.createElement("a");
    link.id = "next";
    link.href = next;
    link.textContent = "next";
    document.body.append(button, link);
    const banner = document.createElement("div");
    // Short: a click low in the local Chromium's page gets no event entries (seen at y > 600 of 720).
    banner.style.height = "60px";
    banner.textContent = "late banner";
    document.body.prepend(banner);
    return new Promise((r) => setTimeout(r, 200));
  }`;

  it("records a page's INP and CLS when a click leaves it and when it is closed, once each", async () => {
    const first = `${env.TARGET_URL}/app/sign-in`;
    const second = `${first}?second`;
    const recorded = await withPage("<p>start</p>", async (call, page, recorded) => {
      const onPage = { kind: "page", page } as const;
      const click = (selector: string) => call({ kind: "locator", page, steps: [step("locator", selector)] }, "click");
      await call(onPage, "goto", [first]);
      await call(onPage, "evaluate", [SHIFT_AND_BUSY_BUTTON, true, second]);
      await click("#busy");
      // A moment between two clicks, as a user's: the busy click's entry comes after the next frame.
      await call(onPage, "evaluate", ["() => new Promise((r) => setTimeout(r, 300))", true]);
      // Left by a click: the document gives its vitals as it is hidden.
      await Promise.all([call(onPage, "waitForNavigation"), click("#next")]);
      await call(onPage, "evaluate", [SHIFT_AND_BUSY_BUTTON, true, first]);
      await click("#busy");
      // Closed: the shard asks for them first.
      await call(onPage, "close");
      return recorded;
    });
    type Trend = { name: string; value: number; tags: Record<string, string> };
    const vitals = recorded.filter((s) => s.type === "trend" && /_(inp|cls)$/.test(s.name)) as unknown as Trend[];
    expect(vitals.map((s) => [s.name, s.tags.url])).toEqual([
      ["browser_web_vital_inp", first],
      ["browser_web_vital_cls", first],
      ["browser_web_vital_inp", second],
      ["browser_web_vital_cls", second],
    ]);
    // The busy click's 150 ms, and the banner's shift.
    for (const s of vitals.filter((v) => v.name.endsWith("inp"))) expect(s.value).toBeGreaterThanOrEqual(150);
    for (const s of vitals.filter((v) => v.name.endsWith("cls"))) expect(s.value).toBeGreaterThan(0);
  });
});
