/**
 * The k6 modules a script may import, what each exports, which of those block (and so are
 * awaited after the rewrite, async-transform.ts), and the modules edgeload refuses before
 * any load with the reason. One table for the bundler (what resolves, what is refused), the
 * init context in Node and the runtime in the shard.
 */

import { STREAM_CLASSES } from "./runtime/streams.ts";

export interface CompatModule {
  readonly exports: readonly string[];
  /** Exports that block a k6 VU (a request, sleep, a group around them). */
  readonly blocking: readonly string[];
}

export const MODULES = {
  k6: { exports: ["check", "sleep", "group", "fail", "randomSeed"], blocking: ["sleep", "group"] },
  "k6/http": {
    exports: [
      "request",
      "get",
      "post",
      "put",
      "patch",
      "del",
      "head",
      "options",
      "batch",
      "asyncRequest",
      "expectedStatuses",
      "setResponseCallback",
      "url",
      "file",
      "cookieJar",
      "CookieJar",
    ],
    blocking: ["request", "get", "post", "put", "patch", "del", "head", "options", "batch"],
  },
  "k6/metrics": { exports: ["Counter", "Gauge", "Rate", "Trend"], blocking: [] },
  "k6/data": { exports: ["SharedArray"], blocking: [] },
  "k6/execution": { exports: ["vu", "scenario", "instance", "test"], blocking: [] },
  "k6/encoding": { exports: ["b64encode", "b64decode"], blocking: [] },
  "k6/html": { exports: ["parseHTML"], blocking: [] },
  "k6/crypto": {
    exports: ["md4", "md5", "sha1", "sha256", "sha384", "sha512", "sha512_224", "sha512_256", "ripemd160", "hmac", "randomBytes", "createHash", "createHMAC"],
    blocking: [],
  },
  // Timers and sockets do not block: the VU's event loop waits for them after the iteration's function (runtime/event-loop.ts).
  "k6/timers": { exports: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"], blocking: [] },
  "k6/websockets": { exports: ["WebSocket", "Blob"], blocking: [] },
  "k6/experimental/websockets": { exports: ["WebSocket", "Blob"], blocking: [] },
  // The isolate's own WHATWG streams: k6 implements the same standard (runtime/streams.ts).
  "k6/experimental/streams": { exports: STREAM_CLASSES, blocking: [] },
  // k6's older callback API: connect returns once the socket has closed (runtime/ws-legacy.ts).
  "k6/ws": { exports: ["connect"], blocking: ["connect"] },
  // Its calls return promises the script awaits, as in k6: nothing to rewrite. The shard holds
  // the browser (runtime/vu-modules/browser.ts); what is not built is refused (browser-refusals.ts).
  // `devices` is k6's table of device descriptors, data the VU has (runtime/vu-modules/browser-devices.ts),
  // `networkProfiles` k6's throttling profiles (runtime/browser-wire.ts NETWORK_PROFILES).
  "k6/browser": { exports: ["browser", "devices", "networkProfiles"], blocking: [] },
} as const satisfies Readonly<Record<string, CompatModule>>;

export type ModuleName = keyof typeof MODULES;

/** Exports k6 v1.8.1 has that edgeload has not built yet, with what they are: refused by name. */
const NOT_BUILT_EXPORTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {};

/**
 * What a script is told for a named import a compat module does not export: the refusal
 * naming what is not built, when k6 has it; else k6's own complaint, as k6 has no such
 * export either ("does not provide an export named").
 */
export function missingExport(module: string, name: string): string {
  const why = NOT_BUILT_EXPORTS[module]?.[name];
  if (why) return `import of \`${name}\` from ${module}: ${why}, is not built in edgeload yet`;
  return `${module} does not provide an export named \`${name}\` (as k6 says of it)`;
}

export const isSupportedModule = (name: string): name is ModuleName => Object.hasOwn(MODULES, name);

/** Why a k6 module or a kind of import is not run by edgeload (exit 104 before any load). */
export function refusal(specifier: string): string | null {
  if (isSupportedModule(specifier)) return null;
  if (specifier.startsWith("k6/experimental/browser"))
    return `${specifier}: k6's experimental browser module, whose calls k6 v1 made async in k6/browser; import k6/browser`;
  if (specifier.startsWith("k6/net/grpc")) return `${specifier}: gRPC is not available to Workers' fetch`;
  if (specifier.startsWith("k6/x/")) return `${specifier}: xk6 extensions are Go code compiled into a custom k6 binary; a Worker cannot run them`;
  if (specifier.startsWith("k6")) return `${specifier}: not a module edgeload's k6 compat layer provides (supported: ${Object.keys(MODULES).join(", ")})`;
  return null;
}

/** The short name blocking imports are marked with: `k6/http` → `http`, `k6` → `k6`. */
export const shortName = (name: ModuleName) => (name === "k6" ? "k6" : name.slice(3).replaceAll("/", "_"));

/** Marked local names (see async-transform.ts): `__k6async_http_get`, `__k6asyncns_http`. */
export const asyncName = (name: ModuleName, exported: string) => `__k6async_${shortName(name)}_${exported}`;
export const asyncNamespace = (name: ModuleName) => `__k6asyncns_${shortName(name)}`;

/** Whether a marked member call blocks: `__k6asyncns_http.get`. */
export function isBlockingMember(object: string, property: string): boolean {
  const match = /^__k6asyncns_([a-z0-9]+)$/.exec(object);
  if (!match) return false;
  const name = (match[1] === "k6" ? "k6" : `k6/${match[1]}`) as ModuleName;
  return isSupportedModule(name) && (MODULES[name].blocking as readonly string[]).includes(property);
}

export const isBlockingName = (name: string) => name.startsWith("__k6async_");

/**
 * The source of the virtual module a `k6/…` import resolves to in the bundle: each export
 * read from the per-VU module objects the factory receives (`__k6modules`), blocking ones
 * under their marked names.
 */
export function virtualModuleSource(name: ModuleName): string {
  const m = MODULES[name];
  const lines = [`const m = __k6modules[${JSON.stringify(name)}];`, `const ${asyncNamespace(name)} = m;`, `export default ${asyncNamespace(name)};`];
  for (const e of m.exports) {
    if ((m.blocking as readonly string[]).includes(e)) lines.push(`const ${asyncName(name, e)} = m.${e};`, `export { ${asyncName(name, e)} as ${e} };`);
    else lines.push(`export const ${e} = m.${e};`);
  }
  return lines.join("\n");
}
