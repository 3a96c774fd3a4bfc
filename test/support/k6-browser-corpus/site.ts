/**
 * The pages grafana/k6's browser examples read, served on loopback for the browser corpus
 * (test/e2e/k6-browser-corpus.test.ts): quickpizza.grafana.com's home page and legacy
 * test.k6.io pages, example.com and the dark-mode-toggle demo, cut down to the elements the scripts find. They are look-alikes,
 * not copies: the real sites are on the internet, which the tests do not reach.
 *
 * - /test.k6.io/ — the front page: `header h1.title` "QuickPizza Legacy" and links named by
 *   their paths (/contacts.php, /news.php, /my_messages.php, /flip_coin.php), no h3.
 * - /my_messages.php — the login form (login, password, a "Go!" submit); its POST answers
 *   "Welcome, admin!" for admin/123 and sets the AWSALB cookie the real site's balancer sets.
 *   The POST is held 500 ms, as the real one takes a trip over the internet: keyboard.js
 *   presses Enter and only then waits for the navigation, which on loopback would be over.
 * - /flip_coin.php — two submit buttons; `?bet=` shows "Your bet: heads." or "tails.".
 * - /news.php, /contacts.php (an h3 "Contact us"), /dark-mode-toggle/demo/ (the toggle with
 *   mode="light").
 * - / — QuickPizza's home page: it reads /api/tools when it loads, and its "Pizza, Please!"
 *   button POSTs the pizza's restrictions to /api/pizza and shows "Name: " and the pizza's
 *   name, which is the body's customName when it has one (route_continue.js rewrites the body
 *   to set it), as the real API does.
 * - /example.com/ — example.com's page, for page_waitForEvent.js, whose wait matches a URL that
 *   contains "example.com".
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Each page says it is laid out at the device's width, as a page made for phones does: without
 * it a phone's browser lays a page out 980 px wide, and device_emulation.js checks that the
 * page's width is the emulated iPhone's.
 */
const page = (title: string, body: string) =>
  `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>\n<body>\n${body}\n</body></html>\n`;

const FRONT = page(
  "QuickPizza Legacy",
  `<header><h1 class="title">QuickPizza Legacy</h1></header>
<p>The legacy pages of the demo site, served on loopback for the browser corpus.</p>
<ul>
<li><a href="/contacts.php">/contacts.php</a></li>
<li><a href="/news.php">/news.php</a></li>
<li><a href="/my_messages.php">/my_messages.php</a></li>
<li><a href="/flip_coin.php">/flip_coin.php</a></li>
</ul>`,
);

const LOGIN_FORM = `<h2>Unauthorized</h2>
<form method="POST" action="/my_messages.php">
<input type="text" name="login" autocomplete="off">
<input type="password" name="password" autocomplete="off">
<input type="submit" value="Go!">
</form>`;

const FLIP_FORM = `<form method="GET" action="/flip_coin.php">
<input type="submit" name="bet" value="Bet on heads!">
<input type="submit" name="bet" value="Bet on tails!">
</form>`;

const QUICKPIZZA = page(
  "QuickPizza",
  `<h1>Looking to break out of your pizza routine?</h1>
<button type="button" id="pizza">Pizza, Please!</button>
<div id="recommendation"></div>
<script>
fetch("/api/tools").catch(() => {});
document.getElementById("pizza").addEventListener("click", async () => {
  const restrictions = { maxCaloriesPerSlice: 1000, mustBeVegetarian: false, excludedIngredients: [], excludedTools: [], maxNumberOfToppings: 5, minNumberOfToppings: 2, customName: "" };
  const res = await fetch("/api/pizza", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(restrictions) });
  const { pizza } = await res.json();
  const name = document.createElement("p");
  name.textContent = "Name: " + pizza.name;
  document.getElementById("recommendation").replaceChildren(name);
});
</script>`,
);

/** How long the login POST is held: the real one crosses the internet (see the header). */
const LOGIN_HOLD_MS = 500;

export interface BrowserCorpusSite {
  /** http://127.0.0.1:port */
  readonly origin: string;
  stop(): Promise<void>;
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const body = async (req: IncomingMessage) => new URLSearchParams(await text(req));

function html(res: ServerResponse, content: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...headers });
  res.end(content);
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const path = url.pathname;
  if (path === "/test.k6.io" || path === "/test.k6.io/") return html(res, FRONT);
  if (path === "/") return html(res, QUICKPIZZA);
  if (path === "/api/tools") return json(res, { tools: ["Knife", "Pizza cutter", "Scissors"] });
  if (path === "/api/pizza" && req.method === "POST") {
    const restrictions = JSON.parse((await text(req)) || "{}") as { customName?: unknown };
    const name = typeof restrictions.customName === "string" && restrictions.customName ? restrictions.customName : "Loopback Margherita";
    return json(res, { pizza: { id: 1, name } });
  }
  if (path === "/example.com" || path === "/example.com/") return html(res, page("Example Domain", "<h1>Example Domain</h1>"));
  if (path === "/my_messages.php" && req.method === "POST") {
    const form = await body(req);
    await new Promise((resolve) => setTimeout(resolve, LOGIN_HOLD_MS));
    if (form.get("login") === "admin" && form.get("password") === "123")
      return html(res, page("My messages", "<h2>Welcome, admin!</h2>\n<p>No new messages.</p>"), { "set-cookie": "AWSALB=look-alike; Path=/" });
    return html(res, page("My messages", LOGIN_FORM));
  }
  if (path === "/my_messages.php") return html(res, page("My messages", LOGIN_FORM));
  if (path === "/flip_coin.php") {
    const bet = /heads/i.test(url.searchParams.get("bet") ?? "") ? "heads" : /tails/i.test(url.searchParams.get("bet") ?? "") ? "tails" : null;
    return html(res, page("Flip a coin", `${FLIP_FORM}\n${bet ? `<p>Your bet: ${bet}.</p>` : ""}`));
  }
  if (path === "/news.php") return html(res, page("News", "<h1>News</h1>\n<p>Nothing new on loopback.</p>"));
  if (path === "/contacts.php") return html(res, page("Contacts", "<h3>Contact us</h3>\n<p>Write to the loopback.</p>"));
  if (path === "/dark-mode-toggle/demo/")
    return html(res, page("dark-mode-toggle demo", '<dark-mode-toggle id="dark-mode-toggle-3" mode="light"></dark-mode-toggle>'));
  if (path === "/favicon.ico") {
    res.writeHead(204);
    return void res.end();
  }
  res.writeHead(404, { "content-type": "text/plain" });
  res.end(`no look-alike page at ${path}`);
}

export async function startBrowserCorpusSite(): Promise<BrowserCorpusSite> {
  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
