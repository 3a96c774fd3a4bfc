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
