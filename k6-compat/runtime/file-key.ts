/**
 * The key a file `open()`ed by a script is bundled under: its path relative to the entry
 * script's directory, as k6 resolves `open()` against the directory of the module that
 * calls it. Plain string work, so Node (init context) and workerd agree on it.
 *
 * @example fileKey("lib", "../../presets/p.json") // "../presets/p.json"
 */
export function fileKey(moduleDir: string, path: string): string {
  if (path.startsWith("/")) return path;
  const parts: string[] = [];
  for (const part of `${moduleDir}/${path}`.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length && parts[parts.length - 1] !== "..") parts.pop();
    else parts.push(part);
  }
  return parts.join("/") || ".";
}
