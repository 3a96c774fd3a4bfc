/**
 * Refresh-token rotation: every shard keeps rotating its own refresh-token families.
 *
 * Families are split between shards by seed position (entry i belongs to shard
 * i mod shardCount), so no two shards ever present the same token. Within a shard a family
 * is used by one iteration at a time — presenting a token while its rotation is in flight
 * would be a reuse, which revokes the family — so an iteration takes the longest-idle free
 * family, rotates it, and puts the new token back. When every family is busy the
 * iteration is not sent (a dropped iteration, counted in `families_busy`): seed more
 * families than the rate × latency in flight per shard. A family the provider refuses is
 * retired (`families_lost`). The current tokens are part of the shard's checkpoint, so a
 * restarted shard continues each family instead of reusing an old token.
 */
import type { SeedRefreshToken } from "../core/data/seed-set.ts";
import { basicAuth, FORM, jsonBody, type Flow } from "./flow.ts";
import { seedEntries, type ScenarioDefinition } from "./scenario.ts";
import { SCENARIO_OUTLINES } from "../core/spec/builtin-scenarios.ts";

interface Family {
  readonly id: number;
  token: string;
  readonly auth: string;
}

const OK_200 = new Set([200]);

export const refresh: ScenarioDefinition = {
  ...SCENARIO_OUTLINES.refresh,
  create(ctx): Flow {
    const url = `${ctx.target}/token`;
    const mine = seedEntries(ctx, "refresh-tokens")
      .map((e, i) => [e, i] as const)
      .filter(([, i]) => i % ctx.shardCount === ctx.shardIndex);
    if (mine.length === 0)
      throw new Error(`the refresh-token seed set has ${seedEntries(ctx, "refresh-tokens").length} families, fewer than the ${ctx.shardCount} shards`);
    const authOf = (e: SeedRefreshToken) => {
      const id = e.client_id ?? ctx.options.clientId;
      const secret = e.client_secret ?? ctx.options.clientSecret;
      if (!id || !secret) throw new Error("refresh needs client credentials: client_secret in the seed entries or scenario.clientSecret");
      return basicAuth(id, secret);
    };
    const families = new Map<number, Family>(mine.map(([e, i]) => [i, { id: i, token: e.token, auth: authOf(e) }]));
    /** Free families, longest idle first. */
    let free: Family[] = [...families.values()];
    return {
      async run(io) {
        const family = free.shift();
        if (!family) {
          io.count("families_busy");
          return;
        }
        const start = io.now();
        const r = await io.send(0, {
          url,
          method: "POST",
          headers: { authorization: family.auth, "content-type": FORM },
          body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(family.token)}`,
          expect: OK_200,
          readBody: true,
        });
        io.trend("refresh_duration", io.now() - start);
        const next = r.status === 200 ? jsonBody<{ refresh_token?: unknown }>(r)?.refresh_token : undefined;
        const rotated = typeof next === "string" && next.length > 0 && next !== family.token;
        io.check(rotated);
        io.rate("rotation_success", rotated);
        io.rate("refresh_success", rotated);
        if (rotated) {
          family.token = next;
          free.push(family);
        } else if (r.status === 400 || r.status === 401) {
          // Refused (reused, revoked, expired): this family cannot continue.
          families.delete(family.id);
          io.count("families_lost");
        } else {
          // No verdict (timeout, 5xx): the token may or may not have rotated; keep trying it.
          free.push(family);
        }
      },
      snapshot() {
        return [...families.values()].map((f) => [f.id, f.token]);
      },
      restore(state) {
        const tokens = new Map(state as Array<[number, string]>);
        for (const [id, f] of families) {
          const token = tokens.get(id);
          if (token === undefined) families.delete(id);
          else f.token = token;
        }
        free = [...families.values()];
      },
    };
  },
};
