/**
 * The k6 API as one VU sees it: `k6`, `k6/http`, `k6/metrics`, `k6/data`, `k6/execution`,
 * `k6/encoding`, `k6/crypto`, `k6/html`, `k6/timers`, the WebSocket modules and `k6/browser`, built per VU
 * over its context. Plain JavaScript over an injected host, so the same objects serve the
 * init context in Node (host absent: no requests, metric declarations collected) and the VUs
 * in a shard's loaded isolate.
 *
 * This is the table that names them; each module of the VU is made in its own file under
 * vu-modules/ over the VU's scope (vu-modules/context.ts). Requests leave through the host
 * (the shard's engine sends and times them); checks and custom metrics are buffered as
 * samples and travel with the next request, sleep or the iteration's end.
 */
import { b64decode, b64encode } from "./encoding.ts";
import { crypto } from "./crypto.ts";
import { scriptConsole } from "./script-console.ts";
import { VuEventLoop } from "./event-loop.ts";
import { createStreams } from "./streams.ts";
import { createTimers } from "./timers.ts";
import { type VuContext, vuScope } from "./vu-modules/context.ts";
import { createK6 } from "./vu-modules/k6.ts";
import { createVuMath } from "./vu-modules/vu-math.ts";
import { createHttp } from "./vu-modules/http.ts";
import { createMetrics } from "./vu-modules/metrics.ts";
import { createData } from "./vu-modules/data.ts";
import { createExecution } from "./vu-modules/execution.ts";
import { createHtml } from "./vu-modules/html.ts";
import { createSockets } from "./vu-modules/sockets.ts";
import { createBrowserModule } from "./vu-modules/browser.ts";

export type { MetricType, VuContext } from "./vu-modules/context.ts";

export function createVuModules(vu: VuContext): Record<string, unknown> {
  const scope = vuScope(vu);
  const html = createHtml();
  const loop = (vu.loop ??= new VuEventLoop());
  const wait = (ms: number) => scope.host("a timer").sleep(scope.drain(), ms);
  const sockets = createSockets(scope, loop, wait);
  const vuMath = createVuMath();
  let browser: ReturnType<typeof createBrowserModule> | undefined;

  const http = createHttp(scope, html.parse);
  // An asyncRequest the script does not await still holds its iteration, as in k6 (event-loop.ts).
  const asyncRequest = http.asyncRequest;
  http.asyncRequest = (...args) => loop.track(asyncRequest(...args));

  return {
    k6: createK6(scope, vuMath),
    "k6/http": http,
    "k6/metrics": createMetrics(scope),
    "k6/data": createData(vu),
    "k6/execution": createExecution(vu),
    "k6/encoding": { b64encode, b64decode },
    "k6/crypto": crypto,
    // The bundle installs cheerio's parser (runtime/html.ts) when the script uses HTML.
    "k6/html": html.module,
    "k6/timers": createTimers(() => loop, wait),
    "k6/experimental/streams": createStreams(),
    // Read when the script imports one (vu-modules/sockets.ts).
    get "k6/websockets"() {
      return sockets("websockets");
    },
    get "k6/experimental/websockets"() {
      return sockets("websockets");
    },
    get "k6/ws"() {
      return sockets("ws");
    },
    // Read when the script imports it: its metrics are declared then (vu-modules/browser.ts).
    get "k6/browser"() {
      return (browser ??= createBrowserModule(scope));
    },
    // Not a k6 module: the factory's `Math` (bundle.ts), the VU's own for randomSeed (vu-modules/vu-math.ts).
    Math: vuMath.math,
    // Not a k6 module: the factory's `console` (bundle.ts), so console lines are the VU's.
    console: scriptConsole(vu),
  };
}

/** `__k6seq`: forEach and map whose callbacks make requests run them one after another (async-transform.ts). */
export const sequence = {
  async forEach<T>(list: Iterable<T>, fn: (v: T, i: number, all: T[]) => unknown): Promise<void> {
    const all = [...list];
    for (let i = 0; i < all.length; i++) await fn(all[i]!, i, all);
  },
  async map<T, U>(list: Iterable<T>, fn: (v: T, i: number, all: T[]) => U | Promise<U>): Promise<U[]> {
    const all = [...list];
    const out: U[] = [];
    for (let i = 0; i < all.length; i++) out.push(await fn(all[i]!, i, all));
    return out;
  },
};
