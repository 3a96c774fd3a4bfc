/**
 * One VU's state (VuContext) and what every k6 module of that VU reads it through (VuScope):
 * the running iteration's host, the samples waiting to travel with the next call to it, and
 * the tags a sample carries. Its own module so that each k6 module (the files beside it)
 * depends on this and not on the table that gathers them (../vu-modules.ts).
 */
import type { CookieJar } from "../cookie-jar.ts";
import type { VuEventLoop } from "../event-loop.ts";
import type { RpsLimiter } from "../rps-limit.ts";
import type { IterationHost, Sample } from "../wire.ts";

export type MetricType = "counter" | "gauge" | "rate" | "trend";

export interface VuContext {
  /** __VU (0 in the init context, as in k6). */
  readonly id: number;
  /** The VU's own iteration number (__ITER). */
  iteration: number;
  iterationInTest: number;
  scenario: { name: string; executor: string; startTimeMs: number };
  samples: Sample[];
  /** The shard's side of the running iteration; null in the init context. */
  host: IterationHost | null;
  /** Called for every metric the script creates (the init context collects them). */
  readonly declare?: (name: string, type: MetricType, isTime: boolean) => void;
  /** The VU's own cookie jar (emptied at each iteration, as k6's default jar, unless keepsCookies). */
  jar: CookieJar;
  /** The script's options.noCookiesReset: the jar is kept across iterations (vu-options.ts). */
  keepsCookies?: boolean;
  /** options.discardResponseBodies: requests read no body unless their responseType says so. */
  discardsBodies?: boolean;
  /** The script's options.throw: a request failing without a response throws (vu-options.ts). */
  throws?: boolean;
  /** The process's SharedArrays by name: data is built once per isolate. */
  readonly shared: Map<string, readonly unknown[]>;
  /** exec.test.abort()'s message once the VU called it ("" without one): the run stops (script-failure.ts). */
  aborted?: string;
  /** exec.test.fail()'s first message in the running iteration ("" without one), until its outcome takes it. */
  markedFailed?: string;
  /** k6's `group` tag of what the VU records now: "" at the root, `::outer::inner` inside groups. */
  group?: string;
  /** The script's options.maxRedirects, when it sets one (redirect-limit.ts). */
  maxRedirects?: number;
  /** The script's options.userAgent, when it sets one; else k6's (k6-request.ts K6_USER_AGENT). */
  userAgent?: string;
  /** The script's own options.rps, when above 0 (vu-options.ts). */
  rps?: number;
  /** The bucket of options.rps the running iteration's requests wait on (its shard's); absent or null: no limit. */
  rpsLimit?: RpsLimiter | null;
  /** exec.test.options as the CLI made it (k6-compat/test-options.ts); absent or null: an empty object. */
  readonly testOptions?: Readonly<Record<string, unknown>> | null;
  /** Timers and WebSockets the running iteration waits for (event-loop.ts); made by createVuModules. */
  loop?: VuEventLoop;
}

/** A VU as its k6 modules use it. */
export interface VuScope {
  readonly vu: VuContext;
  /** The running iteration's host; in the init context it throws, naming `call`. */
  readonly host: (call: string) => IterationHost;
  /** The samples recorded so far, taken to travel with the next call to the host. */
  readonly drain: () => Sample[];
  /** A sample's k6 tags that only the VU knows (see vuScope). */
  readonly tags: (own: Record<string, unknown> | undefined) => Record<string, string>;
}

export function vuScope(vu: VuContext): VuScope {
  const host = (call: string): IterationHost => {
    if (!vu.host) throw new Error(`${call} in the init context: k6 allows it only in VU code (default, setup, teardown)`);
    return vu.host;
  };
  const drain = () => vu.samples.splice(0);
  /**
   * A sample's k6 tags that only the VU knows: its group (inside one) and the script's own
   * (strings, as k6 keeps them). The shard adds what it knows (scenario, a request's name,
   * url and method, its status): fewer bytes cross to it with every request.
   */
  const tags = (own: Record<string, unknown> | undefined): Record<string, string> => {
    const tags: Record<string, string> = vu.group ? { group: vu.group } : {};
    for (const [k, v] of Object.entries(own ?? {})) tags[k] = String(v);
    return tags;
  };
  return { vu, host, drain, tags };
}

/** `{ tags }` when there are any: an untagged sample or request carries none. */
export function tagsIfAny(tags: Record<string, string>): { tags?: Record<string, string> } {
  return Object.keys(tags).length ? { tags } : {};
}
