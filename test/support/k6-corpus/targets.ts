/**
 * The loopback targets the public k6 corpus runs against (test/e2e/k6-corpus.test.ts), one
 * server for all of them: the httpbin endpoints k6's examples call, the test.k6.io pages
 * QuickPizza now hosts, QuickPizza's API and WebSocket chat, and an echo WebSocket. Only what the corpus's scripts read is answered as the real services do.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { acceptWebSocket, type WebSocketPeer } from "./websocket-server.ts";

export interface CorpusTargets {
  /** http://127.0.0.1:port */
  readonly origin: string;
  stop(): Promise<void>;
}

const TEST_K6_PAGE = `<!DOCTYPE html><html><head><title>Demo website for load testing</title></head>
<body><h1>Welcome to the k6.io demo site!</h1>
<p class="description">This is a replacement of the service test.k6.io, now hosted on the loopback for the corpus.</p>
<a href="/news.php">news</a> <a href="/my_messages.php">messages</a></body></html>`;

type Handler = (req: IncomingMessage, url: URL, body: Buffer, res: ServerResponse) => void | Promise<void>;

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string | string[]> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
};

const text = (res: ServerResponse, status: number, body: string, type = "text/plain") => {
  res.writeHead(status, { "content-type": type });
  res.end(body);
};

function cookiesOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/** httpbin's echo of a request: args, headers, form or json, url. */
function echo(req: IncomingMessage, url: URL, body: Buffer): Record<string, unknown> {
  const type = req.headers["content-type"] ?? "";
  const raw = body.toString("utf8");
  const form: Record<string, string | string[]> = {};
  if (type.startsWith("application/x-www-form-urlencoded")) {
    for (const [k, v] of new URLSearchParams(raw)) {
      const had = form[k];
      form[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
    }
  }
  let parsed: unknown = null;
  try {
    parsed = type.includes("json") ? JSON.parse(raw) : null;
  } catch {}
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [k.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase()), String(v)]),
  );
  return { args: Object.fromEntries(url.searchParams), headers, form, json: parsed, data: raw, url: url.href, method: req.method, origin: "127.0.0.1" };
}

/** QuickPizza's users: the default one logs in with any password, as the corpus's two scripts assume. */
const users = new Map<string, string>();
const token = () => randomBytes(8).toString("hex");
let pizzas = 0;

function pizza(body: Buffer): Record<string, unknown> {
  let customName = "";
  try {
    customName = String(JSON.parse(body.toString("utf8")).customName ?? "");
  } catch {}
  const names = ["Margherita Deluxe", "Pepperoni Passion", "Garden Supreme"];
  return {
    id: ++pizzas,
    name: customName ? customName.slice(0, 64) : names[pizzas % names.length],
    ingredients: [{ name: "Mozzarella" }, { name: "Tomato" }, { name: "Basil" }, { name: "Olive oil" }],
    dough: { name: "Thin" },
    tools: ["Oven"],
  };
}

const authorised = (req: IncomingMessage) => /^token [A-Za-z0-9]{16}$/i.test(req.headers.authorization ?? "");

const routes: [RegExp, Handler][] = [
  [/^\/(get|post|put|patch|delete|anything(\/.*)?)$/, (req, url, body, res) => json(res, 200, echo(req, url, body))],
  [/^\/headers$/, (req, url, body, res) => json(res, 200, { headers: echo(req, url, body).headers })],
  [/^\/status\/(\d{3})$/, (_req, url, _body, res) => text(res, Number(url.pathname.split("/")[2]), "")],
  [
    /^\/delay\/[\d.]+$/,
    async (req, url, body, res) => {
      await new Promise((r) => setTimeout(r, Math.min(10, Number(url.pathname.split("/")[2])) * 1000));
      json(res, 200, echo(req, url, body));
    },
  ],
  [/^\/cookies$/, (req, _url, _body, res) => json(res, 200, { cookies: cookiesOf(req) })],
  [
    /^\/cookies\/set$/,
    (_req, url, _body, res) => {
      res.writeHead(302, { location: "/cookies", "set-cookie": [...url.searchParams].map(([k, v]) => `${k}=${v}; Path=/`) });
      res.end();
    },
  ],
  [
    /^\/basic-auth\/[^/]+\/[^/]+$/,
    (req, url, _body, res) => {
      const [, , user, pass] = url.pathname.split("/");
      const given = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
      if (given === `${user}:${pass}`) json(res, 200, { authenticated: true, user });
      else json(res, 401, { authenticated: false }, { "www-authenticate": 'Basic realm="Fake Realm"' });
    },
  ],
  [
    /^\/redirect\/\d+$/,
    (_req, url, _body, res) => {
      const n = Number(url.pathname.split("/")[2]);
      res.writeHead(302, { location: n > 1 ? `/redirect/${n - 1}` : "/get" });
      res.end();
    },
  ],
  [/^\/(test\.k6\.io\/?)?$/, (_req, _url, _body, res) => text(res, 200, TEST_K6_PAGE, "text/html; charset=utf-8")],
  [/^\/(test\.k6\.io\/)?static\/.+$|^\/style\.css$|^\/teddy\.jpg$/, (_req, _url, _body, res) => text(res, 200, "/* static */")],
  [/^\/(test\.k6\.io\/)?pi\.php$/, (_req, _url, _body, res) => text(res, 200, "3.14")],
  [/^\/flip_coin\.php$/, (_req, _url, _body, res) => text(res, 200, "<p>You won</p>", "text/html")],
  [
    /^\/metrics$/,
    (_req, _url, _body, res) =>
      text(res, 200, `# HELP corpus_requests_total requests\n# TYPE corpus_requests_total counter\ncorpus_requests_total ${pizzas}\n`),
  ],
  [/^\/api\/pizza$/, (req, _url, body, res) => (authorised(req) ? json(res, 200, { pizza: pizza(body) }) : json(res, 401, { error: "authentication failed" }))],
  [/^\/api\/csrf-token$/, (_req, _url, _body, res) => json(res, 200, {}, { "set-cookie": `csrf_token=${token()}; Path=/` })],
  [
    /^\/api\/users$/,
    (_req, _url, body, res) => {
      const { username, password } = JSON.parse(body.toString("utf8") || "{}");
      users.set(String(username), String(password));
      json(res, 201, { username });
    },
  ],
  [
    /^\/api\/users\/token\/login$/,
    (_req, _url, body, res) => {
      const { username, password } = JSON.parse(body.toString("utf8") || "{}");
      const ok = username === "default" || username === "synthetics_multihttp_example" || (users.has(username) && users.get(username) === password);
      if (ok) json(res, 200, { token: token() });
      else json(res, 401, { error: "login failed" });
    },
  ],
  [
    /^\/api\/users\/token\/authenticate$/,
    (req, _url, _body, res) => (authorised(req) ? json(res, 200, { id: 1, username: "default" }) : json(res, 401, { error: "invalid token" })),
  ],
  [
    /^\/api\/ratings$/,
    (req, _url, body, res) => (authorised(req) ? json(res, 201, { id: 1, ...JSON.parse(body.toString("utf8") || "{}") }) : json(res, 401, {})),
  ],
];

/** Starts the targets on 127.0.0.1 on a free port. */
export async function startCorpusTargets(): Promise<CorpusTargets> {
  const chat = new Set<WebSocketPeer>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      try {
        const route = routes.find(([pattern]) => pattern.test(url.pathname));
        if (route) await route[1](req, url, Buffer.concat(chunks), res);
        else text(res, 404, `not found: ${url.pathname}`);
      } catch (error) {
        text(res, 500, String(error));
      }
    });
  });
  // Upgraded sockets are no longer the server's connections: closed by stop() themselves.
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req, socket) => {
    upgraded.add(socket);
    socket.on("close", () => upgraded.delete(socket));
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/echo") acceptWebSocket(req, socket, (peer, opcode, payload) => peer.send(opcode, payload));
    else if (path === "/ws") {
      const peer = acceptWebSocket(
        req,
        socket,
        (from, opcode, payload) => {
          for (const p of chat) if (p !== from) p.send(opcode, payload);
        },
        (gone) => chat.delete(gone),
      );
      if (peer) chat.add(peer);
    } else socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
