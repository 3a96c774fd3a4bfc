/**
 * k6's `params.auth: "digest"` (lib/netext/httpext: a digest transport): the request goes
 * first without credentials; a 401 whose WWW-Authenticate offers Digest is answered once,
 * with the URL's user and password, as RFC 7616 (and RFC 2617 before it) computes the
 * response. Both requests are the VU's, and k6 counts both in http_reqs.
 */
import { crypto } from "./crypto.ts";

export interface DigestUser {
  readonly username: string;
  readonly password: string;
}

/** The URL's user and password (`http://user:pass@host/`), or null without them. */
export function userOf(href: string): DigestUser | null {
  let parsed: URL;
  try {
    parsed = new URL(href);
  } catch {
    return null;
  }
  if (!parsed.username && !parsed.password) return null;
  return { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
}

/** The parameters of a `Digest …` challenge (RFC 7616 §3.3), or null when the header offers no Digest. */
export function digestChallenge(header: string | undefined): Record<string, string> | null {
  const at = header?.search(/(^|,\s*)Digest\s/i) ?? -1;
  if (!header || at < 0) return null;
  const params: Record<string, string> = {};
  const pair = /([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (let m = pair.exec(header.slice(at)); m; m = pair.exec(header.slice(at)))
    params[m[1]!.toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!;
  return params.nonce !== undefined ? params : null;
}

const md5 = (s: string) => crypto.md5(s, "hex") as string;

/**
 * The Authorization header answering `challenge` for `method` on `uri` (the request's path
 * and query), `cnonce` the client's nonce; qop `auth` when offered, MD5 or MD5-sess.
 */
export function digestAuthorization(challenge: Record<string, string>, user: DigestUser, method: string, uri: string, cnonce: string): string {
  const { realm = "", nonce = "", opaque } = challenge;
  const algorithm = challenge.algorithm ?? "MD5";
  const qop = challenge.qop
    ?.split(",")
    .map((q) => q.trim())
    .includes("auth")
    ? "auth"
    : undefined;
  const nc = "00000001";
  let ha1 = md5(`${user.username}:${realm}:${user.password}`);
  if (algorithm.toUpperCase() === "MD5-SESS") ha1 = md5(`${ha1}:${nonce}:${cnonce}`);
  const ha2 = md5(`${method}:${uri}`);
  const response = qop ? md5(`${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : md5(`${ha1}:${nonce}:${ha2}`);
  const fields = [`username="${user.username}"`, `realm="${realm}"`, `nonce="${nonce}"`, `uri="${uri}"`, `algorithm=${algorithm}`, `response="${response}"`];
  if (opaque !== undefined) fields.push(`opaque="${opaque}"`);
  if (qop) fields.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
  return `Digest ${fields.join(", ")}`;
}
