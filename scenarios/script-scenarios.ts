/**
 * The built-in scenarios that are k6 scripts shipped in the repo rather than flows of
 * requests (scenarios/catalog.ts has those): `browser-login` drives Chromium through the
 * provider's own sign-in and consent pages (k6/browser), which a flow of requests cannot.
 * `edgeload run --scenario NAME` runs the script as `edgeload run <script>` runs any k6
 * script, with the target and the admin secret in its __ENV (cli/scenario-script.ts).
 */

export interface ScriptScenario {
  readonly name: string;
  readonly description: string;
  /** The script, relative to the project root. */
  readonly script: string;
  /** Whether the script needs the provider's admin API secret (as ADMIN_SECRET) to set itself up. */
  readonly needsAdminSecret: boolean;
}

export const SCRIPT_SCENARIOS: Readonly<Record<string, ScriptScenario>> = {
  "browser-login": {
    name: "browser-login",
    description:
      "the authorization-code flow in Chromium through the provider's sign-in and consent pages, then the token exchange; web vitals per page, LCP p75 thresholds",
    script: "k6-scripts/browser-login.js",
    needsAdminSecret: true,
  },
};
