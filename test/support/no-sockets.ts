/**
 * The WebSocket half of a k6 IterationHost (k6-compat/runtime/wire.ts) for unit tests whose
 * scripts open no socket: any use of it is a test bug, and says so.
 */
import type { IterationHost } from "../../k6-compat/runtime/wire.ts";

const unused = (what: string) => () => Promise.reject(new Error(`${what}: this test's script opens no WebSocket`));

export const noSockets: Pick<IterationHost, "socketSession" | "socketSend" | "socketClose"> = {
  socketSession: unused("socketSession"),
  socketSend: unused("socketSend"),
  socketClose: unused("socketClose"),
};
