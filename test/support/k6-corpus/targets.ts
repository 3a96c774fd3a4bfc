/**
 * The look-alike targets the public k6 corpus runs against (test/e2e/k6-corpus.test.ts), one
 * loopback server for the services whose real program cannot be installed here (real-targets.ts
 * LOOK_ALIKES says why): the test.k6.io pages QuickPizza now hosts with their login flow
 * (test-k6-site.ts), QuickPizza's API and WebSocket chat, test-api.k6.io's crocodile API and
 * chat (crocodiles.ts), k6's localhost example site and an echo WebSocket. Only what the corpus's scripts read is answered as the real services do, and a
 * look-alike shares our assumptions about the wire: httpbin, which installs, is the real one.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { CROCODILE_ROUTES, crocoChat } from "./crocodiles.ts";
import { json, type Route, text } from "./http-route.ts";
import { TEST_K6_PAGE, TEST_K6_ROUTES } from "./test-k6-site.ts";
import { acceptWebSocket, type WebSocketPeer } from "./websocket-server.ts";

export interface CorpusTargets {
  /** http://127.0.0.1:port */
  readonly origin: string;
  stop(): Promise<void>;
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

const routes: readonly Route[] = [
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
  ...CROCODILE_ROUTES,
  ...TEST_K6_ROUTES,
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
    if (crocoChat(req, socket, path)) return;
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
