/**
 * k6/websockets (with k6/experimental/websockets) and k6/ws for one VU, made when the
 * script first imports one: only then are k6's ws_* metrics declared, so the run's summary
 * shows them only for scripts that use sockets.
 */
import type { VuEventLoop } from "../event-loop.ts";
import { SOCKET_METRICS } from "../wire.ts";
import { createWebSockets } from "../websockets.ts";
import { createLegacyWs } from "../ws-legacy.ts";
import type { VuScope } from "./context.ts";

export type SocketModule = "websockets" | "ws";

/** `wait(ms)`: the shard's think time, for k6/ws's socket timers. */
export function createSockets(scope: VuScope, loop: VuEventLoop, wait: (ms: number) => Promise<void>): (name: SocketModule) => Record<string, unknown> {
  const { vu, host, drain, tags } = scope;
  const socketModules: Record<string, Record<string, unknown>> = {};
  return (name) => {
    if (!socketModules[name]) {
      for (const [metric, type] of Object.entries(SOCKET_METRICS)) vu.declare?.(metric, type, type === "trend");
      const deps = { host, loop: () => loop, drain, tags };
      socketModules[name] = name === "ws" ? createLegacyWs(deps, wait) : createWebSockets(deps);
    }
    return socketModules[name];
  };
}
