/**
 * The built-in scenarios with their flows, by the name a run spec or `edgeload run
 * --scenario` uses (their outlines, which a spec is checked against, are in
 * core/spec/builtin-scenarios.ts), and beside them the ones that are k6 scripts
 * (script-scenarios.ts: `browser-login`), which only `edgeload run --scenario` runs.
 */
import { introspect, tokenExchange, userinfo } from "./access-token-scenarios.ts";
import { otpLogin } from "./otp-login.ts";
import { refresh } from "./refresh.ts";
import type { ScenarioDefinition } from "./scenario.ts";
import { SCRIPT_SCENARIOS } from "./script-scenarios.ts";
import { silentAuth } from "./silent-auth.ts";
import type { ScenarioName } from "../core/spec/builtin-scenarios.ts";

/** Every outline with its flow: a built-in scenario without one does not compile. */
const WITH_FLOWS: Readonly<Record<ScenarioName, ScenarioDefinition>> = {
  userinfo,
  introspect,
  "token-exchange": tokenExchange,
  refresh,
  "silent-auth": silentAuth,
  "otp-login": otpLogin,
};

export const SCENARIOS: Readonly<Record<string, ScenarioDefinition>> = WITH_FLOWS;

export { SCRIPT_SCENARIOS };

/** Every name `edgeload run --scenario` takes: the flows, then the scripts. */
export const BUILT_IN_SCENARIO_NAMES: readonly string[] = [...Object.keys(SCENARIOS), ...Object.keys(SCRIPT_SCENARIOS)];
