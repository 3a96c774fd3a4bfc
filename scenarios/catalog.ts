/** The built-in scenarios, by the name a run spec or `edgeload run --scenario` uses. */
import { introspect, tokenExchange, userinfo } from "./access-token-scenarios.ts";
import { otpLogin } from "./otp-login.ts";
import { refresh } from "./refresh.ts";
import type { ScenarioDefinition } from "./scenario.ts";
import { silentAuth } from "./silent-auth.ts";

export const SCENARIOS: Readonly<Record<string, ScenarioDefinition>> = Object.fromEntries(
  [userinfo, introspect, tokenExchange, refresh, silentAuth, otpLogin].map((s) => [s.name, s]),
);

export const SCENARIO_NAMES = Object.keys(SCENARIOS);
