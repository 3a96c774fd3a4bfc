/**
 * The custom metrics of each scenario, declared with the names, kinds and tags the edge
 * scenarios record (scenarios/*.ts), so a preset threshold such as `false_positives:
 * count==0` reads the same on both sides and a summary can be compared line by line.
 * Declared by calling a scenario's factory in the init context of its script.
 *
 * As in an edge summary, every counter shows even at zero ("no false positives" is a
 * result): a factory lists its counters in `shownAtZero`, which scriptOptions turns into
 * expression-less thresholds, k6's way to report a metric that got no samples.
 */
import { Counter, Rate, Trend } from "k6/metrics";
import { TOKEN_TYPES, TYPE_RATE_METRIC } from "../../core/data/seed-set.ts";

/**
 * The duration trend and success rate every scenario keeps, named as in Authrim's suite:
 * `token-exchange` → `token_exchange_duration`, `token_exchange_success`.
 * @param {string} scenario
 */
export function flowMetrics(scenario) {
  const prefix = scenario.replace(/-/g, "_");
  return { duration: new Trend(`${prefix}_duration`, true), success: new Rate(`${prefix}_success`) };
}

export function userinfoMetrics() {
  return { ...flowMetrics("userinfo"), shownAtZero: [] };
}

/**
 * The names of a factory's counters, for `shownAtZero`.
 * @param {Counter[]} counters
 */
const names = (...counters) => counters.map((c) => c.name);

export function introspectMetrics() {
  const falsePositives = new Counter("false_positives");
  const falseNegatives = new Counter("false_negatives");
  return {
    ...flowMetrics("introspect"),
    activeCorrect: new Rate("active_correct"),
    /** Active answers that carry scope, aud, sub, iss, client_id (and act, resource when exchanged). */
    claimsCorrect: new Rate("claims_correct"),
    falsePositives,
    falseNegatives,
    byType: /** @type {Record<(typeof TOKEN_TYPES)[number], Rate>} */ (Object.fromEntries(TOKEN_TYPES.map((t) => [t, new Rate(TYPE_RATE_METRIC[t])]))),
    shownAtZero: names(falsePositives, falseNegatives),
  };
}

/**
 * Sub-metrics per token type (`active_correct{type:revoked}`, `false_positives{type:…}`),
 * shown in the summary as the edge summary shows its tagged variants.
 * @returns {Record<string, string[]>}
 */
export function introspectTypeSubmetrics() {
  /** @type {Record<string, string[]>} */
  const out = {};
  for (const type of TOKEN_TYPES) {
    for (const metric of ["active_correct", "false_positives", "false_negatives"]) out[`${metric}{type:${type}}`] = [];
  }
  return out;
}

export function tokenExchangeMetrics() {
  const invalidTokenAccepted = new Counter("invalid_token_accepted");
  const revokedTokenAccepted = new Counter("revoked_token_accepted");
  const validTokenRejected = new Counter("valid_token_rejected");
  return {
    ...flowMetrics("token-exchange"),
    invalidTokenAccepted,
    revokedTokenAccepted,
    validTokenRejected,
    revokedReasonReported: new Rate("revoked_reason_reported"),
    shownAtZero: names(invalidTokenAccepted, revokedTokenAccepted, validTokenRejected),
  };
}

export function refreshMetrics() {
  const familiesBusy = new Counter("families_busy");
  const familiesLost = new Counter("families_lost");
  return {
    ...flowMetrics("refresh"),
    rotationSuccess: new Rate("rotation_success"),
    familiesBusy,
    familiesLost,
    shownAtZero: names(familiesBusy, familiesLost),
  };
}

export function silentAuthMetrics() {
  const loginRequired = new Counter("login_required");
  const consentRequired = new Counter("consent_required");
  return { ...flowMetrics("silent-auth"), loginRequired, consentRequired, shownAtZero: names(loginRequired, consentRequired) };
}

export function otpLoginMetrics() {
  const failedStep = new Counter("otp_login_failed_step");
  return { ...flowMetrics("otp-login"), failedStep, shownAtZero: names(failedStep) };
}
