/**
 * `console` as a k6 script sees it. In a VU's iteration each line becomes a sample that
 * travels to the shard with the VU's next request, sleep or end, like a check, and is
 * counted in the window of that moment (core/metrics/script-output.ts), so `edgeload run`
 * prints it as k6 prints it: with its level and VU. Outside an iteration (the init context,
 * in Node or in a shard's isolate) there is nowhere to send it, and it goes to the
 * runtime's own console.
 */
import type { LogLevel } from "../../core/metrics/script-output.ts";
import type { Sample } from "./wire.ts";

/** k6's level for each console method (`log` is `info`, as in k6). */
const LEVELS = { log: "info", info: "info", debug: "debug", warn: "warning", error: "error" } as const satisfies Record<string, LogLevel>;

/** One argument as k6 prints it: strings as they are, errors as `Name: message`, objects as JSON. */
function show(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Error) return String(value);
  if (typeof value === "object" && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  }
  return String(value);
}

/** The `console` of one VU. */
export function scriptConsole(vu: {
  readonly id: number;
  readonly host: unknown;
  readonly samples: Sample[];
}): Record<keyof typeof LEVELS, (...args: unknown[]) => void> {
  const method =
    (name: keyof typeof LEVELS) =>
    (...args: unknown[]) => {
      if (!vu.host) {
        globalThis.console[name](...args);
        return;
      }
      vu.samples.push({ type: "log", level: LEVELS[name], message: args.map(show).join(" "), vu: vu.id });
    };
  return { log: method("log"), info: method("info"), debug: method("debug"), warn: method("warn"), error: method("error") };
}
