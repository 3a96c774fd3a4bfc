/**
 * Whether a test that needs an outside binary (k6, Chromium, Prometheus) fails or skips when
 * it is missing. On a developer's machine it skips, its name saying why; under CI (the `CI`
 * variable, set by .ci/run and by every CI service) or when asked with
 * EDGELOAD_REQUIRE_<NAME>=1 it fails: a green CI run must have run every test.
 */
import { describe, it } from "vitest";

export type RequiredBinary = "K6" | "CHROMIUM" | "PROMETHEUS" | "HTTPBIN";

/** Where a binary is, or why it is not there. */
export type Found = { readonly path: string } | { readonly path: null; readonly reason: string };

export function binaryRequired(name: RequiredBinary): boolean {
  const ci = process.env.CI;
  return process.env[`EDGELOAD_REQUIRE_${name}`] === "1" || (ci !== undefined && ci !== "" && ci !== "false" && ci !== "0");
}

/**
 * A suite that needs `name`'s binary at `path` (null: missing, for `reason`): run, skipped
 * with the reason in its name, or one failing test when the binary is required.
 */
export function describeWithBinary(name: RequiredBinary, suite: string, found: Found, body: (path: string) => void): void {
  if (found.path !== null) {
    const path = found.path;
    describe(suite, () => body(path));
    return;
  }
  const reason = found.reason;
  if (binaryRequired(name)) {
    describe(suite, () => {
      it(`has ${name.toLowerCase()} (required under CI or EDGELOAD_REQUIRE_${name}=1)`, () => {
        throw new Error(reason);
      });
    });
  } else {
    describe.skip(`${suite} (skipped: ${reason}; CI or EDGELOAD_REQUIRE_${name}=1 makes this a failure)`, () => body(""));
  }
}

/** One test that needs `name`'s binary: run, skipped with the reason in its name, or failing when the binary is required. */
export function itWithBinary(name: RequiredBinary, test: string, found: Found, options: { timeout?: number }, fn: () => Promise<void>): void {
  if (found.path !== null) it(test, options, fn);
  else if (binaryRequired(name)) it(test, () => Promise.reject(new Error(`${found.reason} (required under CI or EDGELOAD_REQUIRE_${name}=1)`)));
  else it.skip(`${test} (skipped: ${found.reason}; CI or EDGELOAD_REQUIRE_${name}=1 makes this a failure)`, fn);
}
