/**
 * The --modules-dir lookup: a folder laid out as module URLs are (`<dir>/<host>/<path>`), read
 * before the cache and the network by machines with no network at all (remote-modules.ts).
 *
 * A URL is the script's (or a module's) to choose, the folder is the user's, so a URL must
 * not reach past the folder: not by an encoded separator the URL parser keeps (`..%2f`,
 * `%5c`), not by its host (`https://../x` has the host `..`), not by a symlink inside the
 * folder that points outside it. The path is decoded once, segment by segment; a segment
 * that decodes to a separator is refused, since no file name can hold one; what is left is
 * joined, checked with path.relative against the folder, and checked again after realpath.
 */
import { readFile, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** What the folder holds for a URL: its module, nothing, or a refusal (the URL points outside it). */
export type ModuleDirRead =
  | { readonly kind: "found"; readonly contents: string }
  | { readonly kind: "absent" }
  | { readonly kind: "refused"; readonly reason: string };

const ABSENT: ModuleDirRead = { kind: "absent" };

/**
 * The module `url` names under `dir`. A refusal's reason names the folder; the caller puts
 * the URL before it. Pinned by remote-modules.test.ts ("--modules-dir is confined to its folder").
 */
export async function readFromModulesDir(dir: string, url: URL): Promise<ModuleDirRead> {
  const root = resolve(dir);
  const refuse = (why: string): ModuleDirRead => ({ kind: "refused", reason: `${why}, outside --modules-dir ${root}` });
  const segments = decodedSegments(url.pathname);
  if (segments === null) return refuse("its path is not valid percent-encoding, so it names no file");
  if (segments.some((s) => /[/\\\0]/.test(s) || s === "." || s === ".."))
    return refuse('its path holds an encoded "/", "\\", NUL or dot segment (%2f, %5c, %00), which names no file');
  const candidate = join(root, url.host, ...segments);
  if (isOutside(root, candidate)) return refuse(`it resolves to ${candidate}`);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (error) {
    if (isMissing(error)) return ABSENT;
    throw error;
  }
  // Compared with the folder's own realpath: the folder itself may be reached through a link.
  if (isOutside(await realpath(root), real)) return refuse(`it is a link to ${real}`);
  try {
    return { kind: "found", contents: await readFile(real, "utf8") };
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === "EISDIR") return ABSENT;
    throw error;
  }
}

/** The path's segments, each percent-decoded once; null when one is not valid percent-encoding. */
function decodedSegments(pathname: string): string[] | null {
  try {
    return pathname
      .split("/")
      .filter((s) => s !== "")
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

function isOutside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}
