/**
 * k6's `global`: the global object under a second name, as k6 defines it in its default
 * compatibility mode ("extended"; k6 v1.8.1 internal/js/bundle.go setupJSRuntime). Code built
 * for Node reads it — k6chaijs 4.3.4.3, the version k6's docs pin, dies in its init context
 * without it (107). Set on the realm a script runs in: the shard's loaded isolate
 * (entry.ts) and the Node realm of the init context (../init-context.ts).
 */

/** Defines `global` on `realm` (its global object) unless the realm has one already. */
export function defineGlobal(realm: object): void {
  if (Object.hasOwn(realm, "global")) return;
  // Writable and configurable, as k6's accessor lets a script replace it.
  Object.defineProperty(realm, "global", { value: realm, writable: true, configurable: true, enumerable: false });
}
