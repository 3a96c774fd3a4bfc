/**
 * A k6 script as a shard's flow. Workers forbid `eval`, so the script (bundled and
 * rewritten by k6-compat/bundle.ts) runs in an isolate of its own, started through the
 * Worker Loader binding with no network access (`globalOutbound: null`): the only way out
 * is this shard's engine, which sends, times and counts every request as it does for
 * steps, and refuses URLs off the deployment's allow-list before they are sent.
 *
 * Each iteration is one call on a session of the script's isolate (ScriptSessions), handing
 * it an `IterationHost` (an RpcTarget) to call back for each request and sleep; checks and
 * custom metrics ride along with those calls and with the iteration's end, and are applied
 * here, in the window of the moment they arrive.
 */
import type { Outbound } from "../../core/outbound/outbound-request.ts";
import { RpcTarget } from "cloudflare:workers";
import { scriptStepOf, type ScriptSpec } from "../../core/spec/script-schema.ts";
import { redactUrlsIn } from "../../core/spec/redact-url.ts";
import { IterationCouldNotRun, IterationInterrupted, type Flow, type FlowIO, type IterationInfo } from "../../scenarios/flow.ts";
import { couldNotRunMessage } from "../../core/run/script-start.ts";
import type {
  IterationHost as Host,
  IterationOutcome,
  IterationStart,
  RedirectCookies,
  Sample,
  ScriptSessionApi,
  SampleTags,
  SocketEvent,
  SocketRequest,
  WireRequest,
  WireResponse,
} from "../../k6-compat/runtime/wire.ts";
import { ScriptSockets } from "./script-sockets.ts";
import { setupDataKey } from "../../k6-compat/runtime/setup-data-key.ts";
import type { VuPoolRange } from "../../core/schedule/vu-ids.ts";
import type { ShardLoadShare } from "../../k6-compat/runtime/rps-limit.ts";
import { ScriptSessions, type ScriptSession } from "./script-sessions.ts";
import { BrowserHost, type ShardBrowserPort } from "./browser-host.ts";
import type { BrowserAnswer, BrowserCall } from "../../k6-compat/runtime/browser-wire.ts";

/** What PUT /v1/scripts stores: the runtime and the script's factory (k6-compat/bundle.ts). */
export interface ScriptModules {
  readonly "main.js": string;
  readonly "script.js": string;
}

interface ScriptEntrypoint {
  /** One billed call; the iterations on the session it returns are not (k6-compat/runtime/entry.ts). */
  session(): Promise<ScriptSession<ScriptSessionApi>>;
  phase(host: Host, name: "setup" | "teardown", start: IterationStart, setupJson: string | null): Promise<IterationOutcome & { data: string | null }>;
}

/** The compatibility date scripts' isolates run with (the coordinator Worker's own). */
const COMPATIBILITY_DATE = "2026-11-01";

/** The entrypoint of a script's isolate; one isolate per run and bundle. */
export function scriptEntrypoint(loader: WorkerLoader, key: string, modules: ScriptModules): ScriptEntrypoint {
  const worker = loader.get(key, () => ({
    compatibilityDate: COMPATIBILITY_DATE,
    // k6/crypto's synchronous hashes come from node:crypto (k6-compat/runtime/crypto.ts).
    compatibilityFlags: ["nodejs_compat"],
    mainModule: "main.js",
    modules: { "main.js": modules["main.js"], "script.js": modules["script.js"] },
    // No network of its own: every request goes through the shard's engine.
    globalOutbound: null,
  }));
  return worker.getEntrypoint() as unknown as ScriptEntrypoint;
}

export interface ScriptRun {
  readonly script: ScriptSpec;
  readonly scenario: { readonly name: string; readonly executor: string; readonly startTimeMs: number };
  /** The scenario's VUs have ids offset + 1 … in the test (core/schedule/vu-ids.ts). */
  readonly vuIdOffset: number;
  /** This shard's VUs for arrival-rate iterations. */
  readonly pool: VuPoolRange;
  /** Which shard this is and its share of its scenario: its part of options.rps (k6-compat/runtime/rps-limit.ts). */
  readonly shard?: ShardLoadShare;
  /** The scenario-wide number of this shard's k-th closed-model iteration (segmentedIndex). */
  readonly iterationInTest: (k: number) => number;
  /** k6's test-wide tags (options.tags, a scenario's tags): every sample has them unless it says otherwise. */
  readonly tags?: Readonly<Record<string, string>>;
  /** The run's step names: a request is recorded under the one its tag names (scriptStepOf). */
  readonly steps: readonly string[];
  readonly setupData: string | null;
  /** The way out: whether a URL may be sent to (the deployment's allow-list), and the fetch sockets open with. */
  readonly outbound: Outbound;
  /** The shard's browser, for k6/browser (browser-host.ts); absent where the deployment has no Browser Run binding. */
  readonly browser?: ShardBrowserPort & { endInvocation(final: boolean): Promise<void> };
}

export function scriptFlow(entry: ScriptEntrypoint, run: ScriptRun): Flow {
  const setupDataKeyOf = run.setupData === null ? null : setupDataKey(run.setupData);
  const sessions = new ScriptSessions(() => entry.session());
  /** Closed-model iterations this shard has started (checkpointed: the count goes on after a restart). */
  let closedStarted = 0;
  return {
    iterationsMayBeEmpty: true,
    timesIterations: true,
    ...(run.script.minIterationDuration !== undefined ? { minIterationMs: run.script.minIterationDuration } : {}),
    snapshot: () => ({ closedStarted }),
    // The alarm is over: its browser connection ends, the session stays for the next (browser-session.ts).
    ...(run.browser ? { invocationEnded: (final: boolean) => run.browser!.endInvocation(final) } : {}),
    restore(state: unknown) {
      const saved = (state as { closedStarted?: unknown } | null)?.closedStarted;
      if (typeof saved === "number") closedStarted = saved;
    },
    async run(io: FlowIO, it: IterationInfo): Promise<void> {
      const host = new IterationHost(io, run.outbound, run.steps, { ...run.tags, scenario: run.scenario.name }, run.browser);
      // A VU executor's iteration numbers count per VU (it.global); arrival-rate ones are
      // already the scenario's (ShardShare.globalIndex).
      const closed = it.vu !== undefined;
      const start: IterationStart = {
        exec: run.script.exec,
        vu: closed ? run.vuIdOffset + it.vu! : null,
        pool: run.pool,
        iterationInTest: closed ? run.iterationInTest(closedStarted++) : it.global,
        scenario: run.scenario,
        env: run.script.env,
        setupDataKey: setupDataKeyOf,
        ...(run.shard ? { shard: run.shard } : {}),
      };
      const outcome = await sessions
        .use(async (session) => {
          const first = await session.iteration(host, start);
          // setup()'s result crosses once per isolate, not with every iteration (a seed set
          // can be megabytes); an isolate started since asks for it again.
          if (!first.needsSetupData) return first;
          await session.prepare(run.setupData!);
          return session.iteration(host, start);
        })
        .catch((error: unknown) => {
          if (host.interrupted) throw new IterationInterrupted(host.interrupted);
          // The isolate did not start, or died under the iteration: the script never ran it.
          throw new IterationCouldNotRun(couldNotRunMessage(error));
        })
        .finally(async () => {
          host.closeSockets();
          await host.closeBrowser();
        });
      host.apply(outcome.samples);
      // exec.test.abort(): this shard stops now, and the window carries the abort up to the
      // coordinator, which stops the others (k6's ScriptAborted).
      if (outcome.aborted !== undefined && outcome.aborted !== null) io.abortTest?.(outcome.aborted);
      // exec.test.fail(): the window carries the mark to the coordinator; the run goes on.
      if (outcome.markedFailed !== undefined) io.failTest?.(outcome.markedFailed);
      if (host.interrupted) throw new IterationInterrupted(host.interrupted);
      // k6 prints an uncaught exception and ends the iteration, which still counts:
      // counted in this window, which `edgeload run` prints (core/run/script-report.ts).
      if (outcome.error) io.scriptError?.(outcome.error, outcome.at ?? null);
    },
  };
}

/** The shard's side of one iteration, called back by the script's isolate. */
export class IterationHost extends RpcTarget implements Host {
  readonly #io: FlowIO;
  readonly #outbound: Outbound;
  readonly #steps: readonly string[];
  /** k6's tags of everything this iteration records unless it says otherwise: the test's and scenario's, the scenario's name. */
  readonly #defaultTags: SampleTags;
  readonly #sockets: ScriptSockets;
  /** The iteration's browser contexts and pages (k6/browser), opened at its first browser call. */
  readonly #browserPort: ShardBrowserPort | undefined;
  #browser: BrowserHost | null = null;
  /** Why the iteration was cut short, if it was. */
  interrupted: string | null = null;

  constructor(io: FlowIO, outbound: Outbound, steps: readonly string[] = [], defaultTags: SampleTags = { scenario: "default" }, browser?: ShardBrowserPort) {
    super();
    this.#io = io;
    this.#outbound = outbound;
    this.#steps = steps;
    this.#defaultTags = defaultTags;
    this.#sockets = new ScriptSockets(io, outbound);
    this.#browserPort = browser;
  }

  /** A k6/browser call of the script (k6-compat/runtime/browser-wire.ts), made on the shard's browser. */
  async browser(samples: readonly Sample[], call: BrowserCall): Promise<BrowserAnswer> {
    this.apply(samples);
    if (!this.#browserPort) throw new Error("this deployment has no Browser Run binding (BROWSER in wrangler.toml): it cannot run k6/browser scripts");
    this.#browser ??= new BrowserHost(this.#browserPort, this.#outbound.policy, (s) => this.apply(s));
    return this.#browser.call(call);
  }

  /** The iteration is over: its browser contexts are closed, their request metrics recorded. */
  async closeBrowser(): Promise<void> {
    await this.#browser?.close();
  }

  async socketSession(samples: readonly Sample[], request: SocketRequest, listener: (event: SocketEvent) => void): Promise<void> {
    this.apply(samples);
    try {
      // The socket's samples carry the test's and scenario's tags, as its requests' do.
      await this.#sockets.session({ ...request, tags: { ...this.#defaultTags, ...request.tags } }, listener);
    } catch (error) {
      throw this.#interruption(error);
    }
  }

  async socketSend(id: number, data: string | ArrayBuffer): Promise<void> {
    this.#sockets.send(id, data);
  }

  async socketClose(id: number, code: number, reason: string): Promise<void> {
    this.#sockets.close(id, code, reason);
  }

  /** The iteration is over: whatever socket it left open is closed. */
  closeSockets(): void {
    this.#sockets.closeAll();
  }

  /** `redirectCookies`: the VU's jar at each redirect (an RPC stub into the script's isolate). */
  async send(samples: readonly Sample[], request: WireRequest, redirectCookies?: RedirectCookies): Promise<WireResponse> {
    this.apply(samples);
    let url: string;
    try {
      url = new URL(request.url).href;
    } catch {
      throw new Error(`invalid URL "${request.url}"`);
    }
    const refused = this.#outbound.policy(new URL(url));
    if (refused) throw new Error(`request to ${url} refused before it was sent: ${refused}`);
    try {
      const step = scriptStepOf(request.step, this.#steps);
      const r = await this.#io.send(step, {
        url,
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { bodyBytes: request.body } : {}),
        expect: request.expect ? new Set(request.expect) : null,
        readBody: request.readBody,
        ...(request.maxRedirects !== undefined ? { maxRedirects: request.maxRedirects } : {}),
        ...(redirectCookies ? { redirectCookies } : {}),
        ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
        ...(request.tags ? { tags: request.tags } : {}),
      });
      const headers: Record<string, string> = {};
      r.headers?.forEach((value, name) => (headers[name] = value));
      const { status, error, body, durationMs } = r;
      return { status, error, headers, setCookies: r.headers?.getSetCookie() ?? [], body, durationMs, ...(r.url ? { url: r.url } : {}) };
    } catch (error) {
      throw this.#interruption(error);
    }
  }

  async sleep(samples: readonly Sample[], ms: number): Promise<void> {
    this.apply(samples);
    try {
      await this.#io.sleep(ms);
    } catch (error) {
      throw this.#interruption(error);
    }
  }

  /** Checks and custom metrics the script recorded, into the current window. */
  apply(samples: readonly Sample[]): void {
    for (const s of samples) {
      if (s.type === "log") {
        if (this.#io.log) this.#io.log(s.level, s.message, s.vu);
        else console.log(`${s.level} (VU ${s.vu}): ${redactUrlsIn(s.message)}`); // setup() and teardown(): the coordinator's log
        continue;
      }
      // The VU sends only the tags it alone knows (group, the script's own); the rest are this shard's.
      const tags = s.tags && { ...this.#defaultTags, ...s.tags };
      if (s.type === "check") this.#io.check(s.passed, tags);
      else if (s.type === "counter") this.#io.count(s.name, s.value, tags);
      else if (s.type === "rate") this.#io.rate(s.name, s.passed, tags);
      else this.#io.trend(s.name, s.value, tags);
      // A Gauge's samples are a trend (its min and max) and its last value, which its thresholds read.
      if (s.type === "gauge") this.#io.gauge?.(s.name, s.value);
    }
  }

  #interruption(error: unknown): unknown {
    if (error instanceof IterationInterrupted) this.interrupted = error.message;
    return error;
  }
}
