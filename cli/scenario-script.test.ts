/**
 * `edgeload run --scenario browser-login`: the built-in scenario that is a k6 script runs as
 * that script, with the target and admin secret in its __ENV; the flows' flags are refused
 * by name; a flow scenario is left to the --scenario form.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CliError } from "./connection.ts";
import { PROJECT_ROOT } from "./paths.ts";
import { scenarioScript } from "./scenario-script.ts";
import { scriptRun } from "./script-command.ts";

const GIVEN = { target: "http://127.0.0.1:9090/", "admin-secret": "s3cret" };

describe("scenarioScript", () => {
  it("runs k6-scripts/browser-login.js with BASE_URL (no trailing slash) and ADMIN_SECRET, the command line's -e last", async () => {
    const run = await scenarioScript(
      "browser-login",
      { ...GIVEN, env: ["SIGN_IN_MS=2500", "BASE_URL=http://other.test"] },
      new Set(["scenario", "target", "admin-secret", "env"]),
    );
    expect(run).toEqual({
      path: join(PROJECT_ROOT, "k6-scripts/browser-login.js"),
      env: ["BASE_URL=http://127.0.0.1:9090", "ADMIN_SECRET=s3cret", "SIGN_IN_MS=2500", "BASE_URL=http://other.test"],
    });
  });

  it("leaves a flow scenario to the --scenario form", async () => {
    expect(await scenarioScript("userinfo", GIVEN, new Set(["scenario"]))).toBeNull();
  });

  it("refuses every flag only a flow takes, naming each, exit 104", async () => {
    const given = new Set(["scenario", "preset", "client-id", "rate", "no-preflight", "vus"]);
    const refusal = await scenarioScript("browser-login", GIVEN, given).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(CliError);
    expect((refusal as CliError).code).toBe(104);
    expect((refusal as CliError).message).toBe(
      "--rate, --preset, --client-id, --no-preflight cannot apply to --scenario browser-login, a k6 script (k6-scripts/browser-login.js): its load is --vus, -d, -i or --stage, as any script's",
    );
  });
});

describe("k6-scripts/browser-login.js's options", () => {
  const script = join(PROJECT_ROOT, "k6-scripts/browser-login.js");

  it("hold each page's TTFB, FCP and LCP at p75 under its URL on the target, one browser scenario of ITERATIONS", async () => {
    const run = await scriptRun(script, { BASE_URL: "http://127.0.0.1:9/", ADMIN_SECRET: "s", ITERATIONS: "2" }, null);
    const thresholds = run.spec.thresholds as Record<string, string[]>;
    expect(thresholds.browser_web_vital_lcp).toEqual(["p(75)<2500"]);
    for (const page of ["/login", "/consent", "/app/callback"]) {
      // The base URL's trailing slash dropped: the URL as Chromium reports the page.
      expect(thresholds[`browser_web_vital_ttfb{url:http://127.0.0.1:9${page}}`], page).toEqual(["p(75)<800"]);
      expect(thresholds[`browser_web_vital_fcp{url:http://127.0.0.1:9${page}}`], page).toEqual(["p(75)<1800"]);
      expect(thresholds[`browser_web_vital_lcp{url:http://127.0.0.1:9${page}}`], page).toEqual(["p(75)<2500"]);
    }
    expect(thresholds.browser_login_success).toEqual(["rate>0.99"]);
    expect(run.spec.scenarios).toMatchObject({ browser_login: { executor: "shared-iterations", vus: 1, iterations: 2 } });
  });

  it("refuses to start without the admin secret or with a bad count, naming the variable", async () => {
    const without = await scriptRun(script, { BASE_URL: "http://127.0.0.1:9" }, null).catch((e: unknown) => e);
    expect((without as CliError).message).toContain("the browser-login script needs ADMIN_SECRET in the environment");
    const bad = await scriptRun(script, { BASE_URL: "http://127.0.0.1:9", ADMIN_SECRET: "s", VUS: "two" }, null).catch((e: unknown) => e);
    expect((bad as CliError).message).toContain('VUS must be a whole number of at least 1, got "two"');
  });
});
