/**
 * Seed data for the scenario scripts: the same sets edge runs read (core/data/seed-set.ts), from
 * TOKEN_URL (edgeload's signed seed URL, fetched once in setup() and handed to every VU) or
 * TOKEN_PATH (a local file, read with open() in the init context into one SharedArray that
 * all VUs share, so k6 Cloud bundles it with the script and memory stays flat).
 *
 * Each kind is accepted in the object form edgeload's and Authrim's seeders write, or as a
 * bare JSON array of its entries; a bare array of strings is a list of valid JWTs (Authrim's
 * userinfo cloud script) or, for users, of e-mail addresses.
 *
 * Entries are used in a fixed shuffle (core/data/shuffle.ts, the edge scenarios' order), indexed
 * by k6's run-wide iteration number, so a k6 run and an edge run of the same set send the
 * same tokens in the same order and a short run still sees the set's type mix.
 */
import { SharedArray } from "k6/data";
import http from "k6/http";
import { shuffled } from "../../core/data/shuffle.ts";

export { shuffled };

/** @typedef {"valid" | "valid_exchanged" | "expired" | "revoked" | "wrong_audience" | "wrong_client"} TokenType */
/** @typedef {{ access_token: string, type: TokenType }} SeedToken */
/** @typedef {{ email: string, userId?: string }} SeedUser */
/** @typedef {{ token: string, user_id?: string, client_id?: string, client_secret?: string }} SeedRefreshToken */
/** @typedef {{ session_id: string, user_id?: string }} SeedSession */
/** @typedef {{ code: string, code_verifier: string, redirect_uri: string }} SeedAuthCode */
/**
 * @typedef {{ "access-tokens": SeedToken, "users": SeedUser, "refresh-tokens": SeedRefreshToken, "sessions": SeedSession, "auth-codes": SeedAuthCode }} SeedEntry
 * @typedef {keyof SeedEntry} SeedKind
 */

// The token types and what introspection must answer for each: one table for edge and k6.
export { ACTIVE_EXPECTED, activeAnswerComplete, TOKEN_TYPES } from "../../core/data/seed-set.ts";

/** Per kind: the list's key in the object form and the field every entry must have. */
const SHAPES = /** @type {Record<SeedKind, { list: string, field: string }>} */ ({
  "access-tokens": { list: "tokens", field: "access_token" },
  users: { list: "users", field: "email" },
  "refresh-tokens": { list: "refresh_tokens", field: "token" },
  sessions: { list: "sessions", field: "session_id" },
  "auth-codes": { list: "codes", field: "code" },
});

/**
 * TOKEN_PATH as given, or below the working directory when relative (open() alone would
 * resolve it against this module's folder).
 * @param {string} path
 */
function localPath(path) {
  if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("file://")) return path;
  const cwd = __ENV.PWD;
  if (!cwd) throw new Error(`TOKEN_PATH "${path}" is relative and PWD is unknown: pass an absolute path`);
  return `${cwd}/${path}`;
}

/**
 * The entries of a seed document of the kind a script reads; a clear error otherwise.
 * @template {SeedKind} K
 * @param {K} kind
 * @param {unknown} doc
 * @returns {SeedEntry[K][]}
 */
export function seedEntries(kind, doc) {
  const { list, field } = SHAPES[kind];
  /** @type {unknown[] | undefined} */
  const raw = Array.isArray(doc) ? doc : typeof doc === "object" && doc !== null ? /** @type {Record<string, unknown[]>} */ (doc)[list] : undefined;
  if (!Array.isArray(raw)) {
    throw new Error(`the seed set is not a ${kind} set: expected {"${list}": [...]} or a bare JSON array of its entries`);
  }
  if (raw.length === 0) throw new Error("the seed set is empty");
  const entries = raw.map((entry, i) => {
    if (typeof entry === "string" && kind === "access-tokens") return { access_token: entry, type: "valid" };
    if (typeof entry === "string" && kind === "users") return { email: entry };
    if (typeof entry !== "object" || entry === null || typeof (/** @type {Record<string, unknown>} */ (entry)[field]) !== "string") {
      throw new Error(`seed entry ${i} has no "${field}": is this a ${kind} set?`);
    }
    return entry;
  });
  return /** @type {SeedEntry[K][]} */ (entries);
}

/**
 * Downloads TOKEN_URL (in setup(): the init context cannot send requests).
 * @param {string} url
 */
function download(url) {
  // Tagged apart, so the load's own figures (the {scenario:…} sub-metrics) leave it out.
  const response = http.get(url, { responseType: "text", timeout: "120s", tags: { name: "seed", step: "seed" } });
  if (response.status !== 200) throw new Error(`TOKEN_URL answered ${response.status}: ${String(response.body).slice(0, 200)}`);
  return JSON.parse(String(response.body));
}

/**
 * A script's seed set, prepared once (filtered, shuffled, reduced to what the flow needs):
 * from TOKEN_PATH into a SharedArray at init, or from TOKEN_URL in setup(). Call in the
 * init context; `load()` from setup(), `entries(data)` from the default function.
 * @template {SeedKind} K
 * @template T
 * @param {K} kind
 * @param {(entries: SeedEntry[K][]) => T[]} prepare
 * @returns {{ load(): T[] | null, entries(fromSetup: T[] | null): readonly T[] }}
 */
export function seedSet(kind, prepare) {
  const path = __ENV.TOKEN_URL ? undefined : __ENV.TOKEN_PATH;
  const local = path ? new SharedArray(`seed:${kind}`, () => prepare(seedEntries(kind, JSON.parse(open(localPath(path)))))) : null;
  return {
    load() {
      if (local) return null;
      const url = __ENV.TOKEN_URL;
      if (!url) throw new Error(`set TOKEN_URL (edgeload's signed seed URL: \`edgeload seed …\` prints it) or TOKEN_PATH (a local ${kind} file)`);
      return prepare(seedEntries(kind, download(url)));
    },
    entries(fromSetup) {
      const entries = local ?? fromSetup;
      if (!entries) throw new Error("no seed data: setup() did not run");
      return entries;
    },
  };
}

/**
 * The tokens of the given types in the fixed shuffle; a clear error when there are none.
 * @param {readonly SeedToken[]} tokens
 * @param {readonly TokenType[]} types
 */
export function tokensOfTypes(tokens, types) {
  const picked = shuffled(tokens.filter((t) => types.includes(t.type)));
  if (picked.length === 0) throw new Error(`the seed set has no tokens of type ${types.join(" or ")}`);
  return picked;
}
