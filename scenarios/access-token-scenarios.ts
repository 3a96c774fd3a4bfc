/**
 * The scenarios that read an access-token seed set: userinfo, introspect and token
 * exchange (docs/authrim.md). Each iteration uses the token at its run-wide index in a fixed
 * shuffle of the set, so every shard layout sends the same tokens and the set's type mix.
 */
import { ACTIVE_EXPECTED, activeAnswerComplete, TOKEN_TYPES, TYPE_RATE_METRIC, type SeedToken, type TokenType } from "../core/data/seed-set.ts";
import { basicAuth, FORM, jsonBody, type Flow } from "./flow.ts";
import { required, seedEntries, shuffled, type ScenarioContext, type ScenarioDefinition } from "./scenario.ts";
import { SCENARIO_OUTLINES } from "../core/spec/builtin-scenarios.ts";

const OK_200 = new Set([200]);
const OK_400 = new Set([400]);

function tokenPicker(ctx: ScenarioContext, types: readonly TokenType[]): (global: number) => SeedToken {
  const tokens = shuffled(seedEntries(ctx, "access-tokens").filter((t) => types.includes(t.type)));
  if (tokens.length === 0) throw new Error(`the seed set has no tokens of type ${types.join(" or ")}`);
  return (global) => tokens[global % tokens.length]!;
}

export const userinfo: ScenarioDefinition = {
  ...SCENARIO_OUTLINES.userinfo,
  create(ctx): Flow {
    const pick = tokenPicker(ctx, ["valid", "valid_exchanged"]);
    const url = `${ctx.target}/userinfo`;
    return {
      async run(io, it) {
        const start = io.now();
        const r = await io.send(0, {
          url,
          method: "GET",
          headers: { authorization: `Bearer ${pick(it.global).access_token}` },
          expect: OK_200,
          readBody: true,
        });
        const ok = r.status === 200 && typeof jsonBody<{ sub?: unknown }>(r)?.sub === "string";
        io.check(ok);
        io.rate("userinfo_success", ok);
        io.trend("userinfo_duration", io.now() - start);
      },
    };
  },
};

export const introspect: ScenarioDefinition = {
  ...SCENARIO_OUTLINES.introspect,
  create(ctx): Flow {
    const pick = tokenPicker(ctx, TOKEN_TYPES);
    const url = `${ctx.target}/introspect`;
    const headers = { authorization: basicAuth(required(ctx.options, "clientId"), required(ctx.options, "clientSecret")), "content-type": FORM };
    return {
      async run(io, it) {
        const token = pick(it.global);
        const start = io.now();
        const r = await io.send(0, { url, method: "POST", headers, body: `token=${encodeURIComponent(token.access_token)}`, expect: OK_200, readBody: true });
        const answer = r.status === 200 ? jsonBody<Record<string, unknown>>(r) : undefined;
        const active = answer?.active;
        io.trend("introspect_duration", io.now() - start);
        if (typeof active !== "boolean") {
          // No verdict (error status, timeout, unparsable body): a failure, not a wrong answer.
          io.check(false);
          io.rate("introspect_success", false);
          return;
        }
        const expected = ACTIVE_EXPECTED[token.type];
        const correct = active === expected;
        io.check(correct);
        io.rate("introspect_success", correct);
        io.rate("active_correct", correct);
        io.rate(`active_correct{type:${token.type}}`, correct);
        io.rate(TYPE_RATE_METRIC[token.type], correct);
        if (active && correct) {
          // What Authrim's suite checks of an active answer, besides `active` (core/data/seed-set.ts).
          const complete = activeAnswerComplete(answer!, token.type);
          io.rate("claims_correct", complete);
          io.rate(`claims_correct{type:${token.type}}`, complete);
        }
        if (!correct) {
          // A false positive is an invalid token reported active; a false negative the reverse.
          const kind = active ? "false_positives" : "false_negatives";
          io.count(kind);
          io.count(`${kind}{type:${token.type}}`);
        }
      },
    };
  },
};

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

export const tokenExchange: ScenarioDefinition = {
  ...SCENARIO_OUTLINES["token-exchange"],
  create(ctx): Flow {
    const pick = tokenPicker(ctx, ["valid", "expired", "revoked"]);
    const url = `${ctx.target}/token`;
    const headers = { authorization: basicAuth(required(ctx.options, "clientId"), required(ctx.options, "clientSecret")), "content-type": FORM };
    const fixed = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      scope: ctx.options.scope,
    });
    if (ctx.options.audience) fixed.set("audience", ctx.options.audience);
    const fixedText = fixed.toString();
    return {
      async run(io, it) {
        const token = pick(it.global);
        const valid = token.type === "valid";
        const start = io.now();
        const r = await io.send(0, {
          url,
          method: "POST",
          headers,
          body: `${fixedText}&subject_token=${encodeURIComponent(token.access_token)}`,
          // An expired or revoked subject must be refused: that 400 is the expected answer.
          expect: valid ? OK_200 : OK_400,
          readBody: true,
        });
        io.trend("token_exchange_duration", io.now() - start);
        const body = jsonBody<{ access_token?: unknown; error?: unknown; error_description?: unknown }>(r);
        const accepted = r.status === 200 && typeof body?.access_token === "string";
        const refused = r.status === 400 && body?.error === "invalid_grant";
        const correct = valid ? accepted : refused;
        io.check(correct);
        io.rate("token_exchange_success", correct);
        // A valid subject refused by the provider's judgement (4xx other than 429, e.g. 403
        // invalid_target), not for want of capacity: a setup to fix, bounded at zero by the presets.
        if (valid && r.status >= 400 && r.status < 500 && r.status !== 429) io.count("valid_token_rejected");
        if (!valid && accepted) io.count("invalid_token_accepted");
        if (token.type === "revoked") {
          if (accepted) io.count("revoked_token_accepted");
          if (refused) io.rate("revoked_reason_reported", /revoked/i.test(String(body?.error_description ?? "")));
        }
      },
    };
  },
};
