/**
 * The isolate a k6 script runs in: started by a shard through the Worker Loader binding
 * (workers/shard/script-flow.ts) with no network access of its own, it keeps one instance
 * of the script per VU (its own globals, as in k6) and runs iterations when the shard asks.
 *
 * Closed-model runs name their VU; arrival-rate runs take one from their shard's pool by
 * k6's rule (vu-pool.ts). The shards of every scenario of a run may share this isolate, so
 * VUs are kept by their id in the test, which no two scenarios or shards share
 * (core/schedule/vu-ids.ts): each VU is one instance of the script, as in k6.
 */
import { RpcTarget, WorkerEntrypoint } from "cloudflare:workers";
// @ts-expect-error the bundle's own module, made by k6-compat/bundle.ts for each script
import { files, instantiate, lines, testOptions } from "./script.js";
import { scriptFailure } from "./script-failure.ts";
import { fileKey } from "./file-key.ts";
import { setupDataKey } from "./setup-data-key.ts";
import { CookieJar } from "./cookie-jar.ts";
import { vuOptions } from "./vu-options.ts";
import { createVuModules, sequence, type VuContext } from "./vu-modules.ts";
import { VuPool } from "./vu-pool.ts";
import { rpsOption, RpsLimiter, scenarioShare, shardLimiter } from "./rps-limit.ts";
import { defineGlobal } from "./script-global.ts";
import type { IterationHost, IterationOutcome, IterationStart, ScriptSessionApi } from "./wire.ts";

type Instance = { readonly exports: Record<string, unknown>; setIteration(n: number): void };
type Factory = (
  modules: Record<string, unknown>,
  env: Record<string, string>,
  vu: number,
  open: (path: string, mode?: string, moduleDir?: string) => unknown,
  seq: typeof sequence,
) => Instance;
type EmbeddedFile = { readonly text: string } | { readonly base64: string };

interface Vu {
  readonly context: VuContext;
  readonly instance: Instance;
  /** The pool it returns to after each iteration; null for closed-model VUs. */
  readonly pool: VuPool | null;
}

// k6 names the global object `global` too (compatibility mode "extended", its default;
// k6 v1.8.1 internal/js/bundle.go): jslibs built for Node read it (k6chaijs 4.3.4.3).
defineGlobal(globalThis);

/** Every VU this isolate has started, by its id in the test (__VU). */
const byId = new Map<number, Vu>();
/** Arrival-rate shards' pools, by their first id. */
const pools = new Map<number, VuPool>();
const shared = new Map<string, readonly unknown[]>();
/** options.rps's buckets, one per shard (rps-limit.ts shardLimiter). */
const rpsLimiters = new Map<number, RpsLimiter>();
const consolidated = (testOptions as Record<string, unknown> | null | undefined) ?? null;
/** The test's rps: exec.test.options' (the script's with --rps merged), else the script's own (a bundle made without them). */
const testRps = (vu: VuContext): number | undefined => (consolidated ? rpsOption(consolidated.rps) : vu.rps);
/** setup()'s result, parsed once per isolate (see IterationStart.setupDataKey). */
let setupCache: { key: string; value: unknown } | null = null;

function open(path: string, mode?: string, moduleDir = "."): unknown {
  const file = (files as Record<string, EmbeddedFile>)[fileKey(moduleDir, String(path))];
  if (!file) throw new Error(`open("${path}"): only files the script opens in its init context are bundled with it`);
  if ("text" in file) return mode === "b" ? new TextEncoder().encode(file.text).buffer : file.text;
  const bytes = Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0));
  return mode === "b" ? bytes.buffer : new TextDecoder().decode(bytes);
}

function startVu(id: number, start: IterationStart, pool: VuPool | null): Vu {
  const context: VuContext = {
    id,
    iteration: 0,
    iterationInTest: 0,
    scenario: { ...start.scenario },
    samples: [],
    host: null,
    jar: new CookieJar(),
    shared,
    testOptions: consolidated,
  };
  const instance = (instantiate as Factory)(createVuModules(context), { ...start.env }, id, open, sequence);
  const options = vuOptions(instance.exports.options);
  if (options.maxRedirects !== undefined) context.maxRedirects = options.maxRedirects;
  context.throws = options.throws;
  context.keepsCookies = options.keepsCookies;
  context.discardsBodies = options.discardsBodies;
  if (options.userAgent !== undefined) context.userAgent = options.userAgent;
  if (options.rps !== undefined) context.rps = options.rps;
  return { context, instance, pool };
}

function vuFor(start: IterationStart): Vu {
  if (start.vu !== null) {
    let vu = byId.get(start.vu);
    if (!vu) byId.set(start.vu, (vu = startVu(start.vu, start, null)));
    return vu;
  }
  let pool = pools.get(start.pool.first);
  if (!pool) pools.set(start.pool.first, (pool = new VuPool(start.pool)));
  const id = pool.take();
  if (id === null) throw new Error(`all ${start.pool.size} VUs of this shard are busy (VUs ${start.pool.first}…${start.pool.first + start.pool.size - 1})`);
  let vu = byId.get(id);
  if (vu) return vu;
  try {
    vu = startVu(id, start, pool);
  } catch (error) {
    pool.give(id); // its init context threw: the id waits for another try
    throw error;
  }
  byId.set(id, vu);
  return vu;
}

/**
 * What a VU's iteration (or setup() or teardown()) reports: the samples it left, how it ended,
 * and its exec.test.fail() mark, taken so that each call of fail() is reported once.
 */
function outcomeOf(context: VuContext, error: unknown, threw: boolean): IterationOutcome {
  const markedFailed = context.markedFailed;
  delete context.markedFailed;
  return {
    samples: context.samples.splice(0),
    ...scriptFailure(error, threw, context.aborted, lines),
    ...(markedFailed === undefined ? {} : { markedFailed }),
  };
}

/**
 * Iterations, many per call into this isolate: a shard opens one session and runs its
 * iterations on it. Each call into a Dynamic Worker is billed as a request, while calls on an
 * RpcTarget it returns share that call's session and are not (Dynamic Workers pricing).
 */
class ScriptSession extends RpcTarget implements ScriptSessionApi {
  /** Keeps setup()'s result for this isolate's iterations. */
  prepare(json: string): void {
    setupCache = { key: setupDataKey(json), value: JSON.parse(json) };
  }

  /** Runs one iteration of `start.exec`; requests and sleeps go through `host`. */
  async iteration(host: IterationHost, start: IterationStart): Promise<IterationOutcome> {
    if (start.setupDataKey !== null && setupCache?.key !== start.setupDataKey) return { samples: [], error: null, needsSetupData: true };
    const data = start.setupDataKey === null ? undefined : setupCache!.value;
    const vu = vuFor(start);
    const { context, instance } = vu;
    context.host = host;
    // k6 gives the VU a new jar at each iteration unless options.noCookiesReset (internal/js/runner.go runFn).
    if (!context.keepsCookies) context.jar = new CookieJar();
    context.iterationInTest = start.iterationInTest;
    context.scenario = { ...start.scenario };
    context.rpsLimit = shardLimiter(rpsLimiters, testRps(context), start.shard, () => scenarioShare(consolidated, start.scenario.name));
    instance.setIteration(context.iteration);
    try {
      const fn = instance.exports[start.exec];
      if (typeof fn !== "function") throw new Error(`the script exports no function named ${start.exec}`);
      await fn(data);
      // k6's event loop: the iteration ends once its timers and WebSockets are done.
      await context.loop?.drained();
      return outcomeOf(context, null, false);
    } catch (error) {
      context.loop?.cancelAll();
      return outcomeOf(context, error, true);
    } finally {
      context.host = null;
      context.iteration++;
      vu.pool?.give(context.id);
    }
  }
}

export default class K6Script extends WorkerEntrypoint {
  /** A session to run iterations on (see ScriptSession). */
  session(): ScriptSession {
    return new ScriptSession();
  }

  /**
   * Runs setup() or teardown() once, as VU 0 of its own; returns what it returned as JSON
   * (k6 passes setup's result to every VU as a copy, so it must be JSON-serialisable).
   */
  async phase(
    host: IterationHost,
    name: "setup" | "teardown",
    start: IterationStart,
    setupJson: string | null,
  ): Promise<IterationOutcome & { data: string | null }> {
    const vu = startVu(0, start, null);
    vu.context.host = host;
    // k6 tags what setup() and teardown() record with a group of their name (runner.go runPart).
    vu.context.group = `::${name}`;
    // Alone in the test, setup() and teardown() have the whole rate (k6 gives their VU the test's bucket).
    const rps = testRps(vu.context);
    vu.context.rpsLimit = rps === undefined ? null : new RpsLimiter(rps);
    try {
      const fn = vu.instance.exports[name];
      if (typeof fn !== "function") return { samples: [], error: null, data: null };
      const result = await fn(setupJson === null ? undefined : JSON.parse(setupJson));
      await vu.context.loop?.drained();
      const data = result === undefined ? null : JSON.stringify(result);
      return { ...outcomeOf(vu.context, null, false), data };
    } catch (error) {
      vu.context.loop?.cancelAll();
      return { ...outcomeOf(vu.context, error, true), data: null };
    }
  }
}
