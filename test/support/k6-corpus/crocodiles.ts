/**
 * A look-alike of test-api.k6.io, the crocodile API k6's documentation, its jslib tests and the
 * service's own k6_tests/ call, for the corpus (targets.ts). Its program is a Django app
 * published on GitHub only (real-targets.ts LOOK_ALIKES), so what the corpus's scripts read is
 * written here as that program answers (grafana/test-api.k6.io at f6e74d1: project/urls/_base.py,
 * apps/api/views, the REST_FRAMEWORK settings, fixtures/initial.json):
 *
 * - Django's APPEND_SLASH: a path without its slash is answered 301 to the path with it, so a
 *   script's `/public/crocodiles` is two requests, as on the real service.
 * - Django REST framework's authentication in its order (Basic, then a bearer token, then the
 *   session cookie) and its 401 with `WWW-Authenticate: Basic realm="api"` when none holds.
 * - The users the public service has had for years: `user`/`test123!` and the address
 *   k6_tests/api_demo.js registers in its setup(), so that registration is refused (400) as it
 *   is there, whichever tool runs first.
 * - The chat of ws/crocochat/<room>/ (apps/ws_api/consumers/simple.py): every event goes to the
 *   whole room, USER_JOINED on connect, and LEAVE closes the socket with code 3000.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { cookies, fields, json, type Route } from "./http-route.ts";
import { acceptWebSocket, type WebSocketPeer } from "./websocket-server.ts";

interface User {
  readonly id: number;
  readonly username: string;
  readonly password: string;
  readonly email: string;
  readonly first_name: string;
  readonly last_name: string;
}

interface Crocodile {
  readonly id: number;
  name: string;
  sex: string;
  date_of_birth: string;
  readonly owner: string | null;
}

const users = new Map<string, User>();
let nextUserId = 1;
function addUser(u: Omit<User, "id">): User {
  const user = { id: nextUserId++, ...u };
  users.set(user.username, user);
  return user;
}
addUser({ username: "user", password: "test123!", email: "user@example.com", first_name: "", last_name: "" });
addUser({
  username: "nkjshjkcckjhxewewjfhxkjqehnqlx@example.com",
  password: "secret",
  email: "nkjshjkcckjhxewewjfhxkjqehnqlx@example.com",
  first_name: "Crocodile",
  last_name: "Owner",
});

/** fixtures/initial.json's public crocodiles. */
const PUBLIC: readonly [string, string, string][] = [
  ["Bert", "M", "2010-06-27"],
  ["Ed", "M", "1995-02-27"],
  ["Lyle the Crocodile", "M", "1985-03-03"],
  ["Solomon", "M", "1993-12-25"],
  ["The gharial", "F", "2004-06-28"],
  ["Sang Buaya", "F", "2006-01-28"],
  ["Sobek", "F", "1854-09-02"],
  ["Curious George", "M", "1981-01-03"],
];
const crocodiles = new Map<number, Crocodile>(PUBLIC.map(([name, sex, date_of_birth], i) => [i + 1, { id: i + 1, name, sex, date_of_birth, owner: null }]));
let nextCrocodileId = 1000;

/** Whole years since `date`, as the model's `age` property (dateutil's relativedelta). */
function age(date: string): number {
  const born = new Date(`${date}T00:00:00Z`);
  const now = new Date();
  let years = now.getUTCFullYear() - born.getUTCFullYear();
  if (now.getUTCMonth() < born.getUTCMonth() || (now.getUTCMonth() === born.getUTCMonth() && now.getUTCDate() < born.getUTCDate())) years--;
  return years;
}

const shown = (c: Crocodile) => ({ id: c.id, name: c.name, sex: c.sex, date_of_birth: c.date_of_birth, age: age(c.date_of_birth) });

const tokens = new Map<string, string>();
const sessions = new Map<string, string>();
const secret = () => randomBytes(16).toString("hex");

/** The user the request authenticates as, in REST framework's order; "invalid" when a credential it sent is wrong. */
function authenticate(req: IncomingMessage): User | null | "invalid" {
  const authorization = req.headers.authorization ?? "";
  if (/^basic /i.test(authorization)) {
    const [username, password] = Buffer.from(authorization.slice(6), "base64").toString("utf8").split(":");
    const user = users.get(username ?? "");
    return user && user.password === password ? user : "invalid";
  }
  if (/^bearer /i.test(authorization)) return users.get(tokens.get(authorization.slice(7)) ?? "") ?? "invalid";
  const session = sessions.get(cookies(req).sessionid ?? "");
  return session ? (users.get(session) ?? null) : null;
}

const unauthorised = { "www-authenticate": 'Basic realm="api"' };

function withUser(handler: (user: User, ...rest: Parameters<Route[1]>) => void): Route[1] {
  return (req, url, body, res) => {
    const user = authenticate(req);
    if (user === "invalid") return json(res, 401, { detail: "Invalid username/password." }, unauthorised);
    if (user === null) return json(res, 401, { detail: "Authentication credentials were not provided." }, unauthorised);
    handler(user, req, url, body, res);
  };
}

function validCrocodile(f: Record<string, string>): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (!f.name) errors.name = ["This field is required."];
  if (!["M", "F"].includes(f.sex ?? "")) errors.sex = [`"${f.sex ?? ""}" is not a valid choice.`];
  if (!/^\d{4}-\d{2}-\d{2}$/.test(f.date_of_birth ?? "")) errors.date_of_birth = ["Date has wrong format. Use one of these formats instead: YYYY-MM-DD."];
  return errors;
}

const myCrocodiles: Route[1] = withUser((user, req, _url, body, res) => {
  if (req.method === "GET") return json(res, 200, [...crocodiles.values()].filter((c) => c.owner === user.username).map(shown));
  if (req.method !== "POST") return json(res, 405, { detail: `Method "${req.method}" not allowed.` });
  const f = fields(req, body);
  const errors = validCrocodile(f);
  if (Object.keys(errors).length > 0) return json(res, 400, errors);
  const croc: Crocodile = { id: nextCrocodileId++, name: f.name ?? "", sex: f.sex ?? "", date_of_birth: f.date_of_birth ?? "", owner: user.username };
  crocodiles.set(croc.id, croc);
  json(res, 201, shown(croc));
});

const myCrocodile: Route[1] = withUser((user, req, url, body, res) => {
  const croc = crocodiles.get(Number(/(\d+)\/$/.exec(url.pathname)?.[1]));
  if (!croc || croc.owner !== user.username) return json(res, 404, { detail: "Not found." });
  if (req.method === "GET") return json(res, 200, shown(croc));
  if (req.method === "DELETE") {
    crocodiles.delete(croc.id);
    res.writeHead(204);
    return res.end();
  }
  if (req.method !== "PATCH" && req.method !== "PUT") return json(res, 405, { detail: `Method "${req.method}" not allowed.` });
  const f = { ...(req.method === "PATCH" ? { name: croc.name, sex: croc.sex, date_of_birth: croc.date_of_birth } : {}), ...fields(req, body) };
  const errors = validCrocodile(f);
  if (Object.keys(errors).length > 0) return json(res, 400, errors);
  Object.assign(croc, { name: f.name, sex: f.sex, date_of_birth: f.date_of_birth });
  json(res, 200, shown(croc));
});

function register(req: IncomingMessage, body: Buffer): [number, unknown] {
  const f = fields(req, body);
  const errors: Record<string, string[]> = {};
  if (!f.username) errors.username = ["This field is required."];
  else if (users.has(f.username)) errors.username = ["User with this username already exists!"];
  if (!f.password) errors.password = ["This field is required."];
  if (f.email && [...users.values()].some((u) => u.email === f.email)) errors.email = ["User with this email already exists!"];
  if (Object.keys(errors).length > 0) return [400, errors];
  const user = addUser({
    username: f.username ?? "",
    password: f.password ?? "",
    email: f.email ?? "",
    first_name: f.first_name ?? "",
    last_name: f.last_name ?? "",
  });
  return [201, { username: user.username, first_name: user.first_name, last_name: user.last_name, email: user.email }];
}

/** The user a login form names, when its password is right. */
const loggedIn = (f: Record<string, string>) => {
  const user = users.get(f.username ?? "");
  return user && user.password === f.password ? user : null;
};

/** The service's routes, each as Django routes it (the slash-less forms redirect: appendSlash). */
const ROUTES: readonly Route[] = [
  [/^\/public\/crocodiles\/$/, (_req, _url, _body, res) => json(res, 200, [...crocodiles.values()].filter((c) => c.owner === null).map(shown))],
  [
    /^\/public\/crocodiles\/\d+\/$/,
    (_req, url, _body, res) => {
      const croc = crocodiles.get(Number(/(\d+)\/$/.exec(url.pathname)?.[1]));
      if (croc && croc.owner === null) json(res, 200, shown(croc));
      else json(res, 404, { detail: "Not found." });
    },
  ],
  [/^\/user\/register\/$/, (req, _url, body, res) => json(res, ...register(req, body))],
  [
    /^\/auth\/token\/login\/$/,
    (req, _url, body, res) => {
      const user = loggedIn(fields(req, body));
      if (!user) return json(res, 401, { detail: "No active account found with the given credentials" });
      const access = `${secret()}.${secret()}`;
      tokens.set(access, user.username);
      json(res, 200, { refresh: `${secret()}.${secret()}`, access });
    },
  ],
  [
    /^\/auth\/(cookie|basic)\/login\/$/,
    (req, _url, body, res) => {
      const user = loggedIn(fields(req, body));
      if (!user) return json(res, 400, { non_field_errors: ["Incorrect username or password."] });
      const session = secret();
      sessions.set(session, user.username);
      const { password: _password, ...shownUser } = user;
      json(res, 200, { ...shownUser, date_joined: "2019-06-27T14:07:08Z" }, { "set-cookie": `sessionid=${session}; HttpOnly; Path=/; SameSite=Lax` });
    },
  ],
  [
    /^\/auth\/(cookie|basic)\/logout\/$/,
    (req, _url, _body, res) => {
      sessions.delete(cookies(req).sessionid ?? "");
      json(res, 200, null, { "set-cookie": 'sessionid=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/; SameSite=Lax' });
    },
  ],
  [/^\/my\/crocodiles\/$/, myCrocodiles],
  [/^\/my\/crocodiles\/\d+\/$/, myCrocodile],
];

/** Django's APPEND_SLASH: a path that matches only with its slash is a 301 to that path. */
const appendSlash: Route = [
  /^\/(public|my)\/crocodiles(\/\d+)?$|^\/user\/register$|^\/auth\/(token|cookie|basic)\/(login|logout)$/,
  (_req, url, _body, res) => {
    res.writeHead(301, { location: `${url.pathname}/${url.search}`, "content-type": "text/html; charset=utf-8" });
    res.end();
  },
];

export const CROCODILE_ROUTES: readonly Route[] = [...ROUTES, appendSlash];

/** The chat rooms of ws/crocochat/<room>/, by room. */
const rooms = new Map<string, Map<WebSocketPeer, string>>();

/** Whether `path` is a chat room's; when it is, the upgrade on `socket` joins it. */
export function crocoChat(req: IncomingMessage, socket: Duplex, path: string): boolean {
  const room = /^\/ws\/crocochat\/(\w+)\/$/.exec(path)?.[1];
  if (room === undefined) return false;
  const members = rooms.get(room) ?? new Map<WebSocketPeer, string>();
  rooms.set(room, members);
  const tell = (event: Record<string, unknown>) => {
    const frame = Buffer.from(JSON.stringify({ type: "send_message", room, ...event }));
    for (const peer of members.keys()) peer.send(1, frame);
  };
  const peer = acceptWebSocket(
    req,
    socket,
    (from, _opcode, payload) => {
      let said: Record<string, unknown>;
      try {
        said = JSON.parse(payload.toString("utf8"));
      } catch {
        return tell({ received_json: payload.toString("utf8"), event: "ERROR", message: "Invalid JSON sent" });
      }
      const user = members.get(from) ?? "anonymous";
      if (said.event === "SAY") tell({ event: "CHAT_MSG", user, message: said.message ?? "nothing" });
      else if (said.event === "LEAVE") {
        tell({ event: "LEAVE", user, message: `${user} leaves now.` });
        members.delete(from);
        from.close(3000);
      } else if (said.event === "SET_NAME") {
        const name = String(said.new_name ?? "name");
        members.set(from, name);
        tell({ event: "NAME_CHANGE", user: name, message: `User ${user} changed name to '${name}'` });
      } else if (said.event === undefined) tell({ user, event: "ERROR", message: "ERROR someone sent an invalid command" });
    },
    (gone) => members.delete(gone),
  );
  if (peer) {
    members.set(peer, "anonymous");
    tell({ message: "anonymous joined", user: "anonymous", event: "USER_JOINED" });
  }
  return true;
}
