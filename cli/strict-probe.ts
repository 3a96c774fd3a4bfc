/**
 * Before an introspect run: does the provider reject a token minted for another audience?
 * Authrim does not by default (its `strictValidation` is off), and a run against it would
 * then count every `wrong_audience` and `wrong_client` token as a false positive: a failed
 * verdict the user could have avoided before any load. One introspection of one such token
 * from the run's own seed set tells; the run goes ahead either way (its verdict is the
 * judge), with the advice printed first, or why the question could not be asked.
 */
import { parseRunSpec } from "../core/spec/run-spec.ts";
import type { EdgeloadClient } from "./client.ts";

export type ProbeResult = "rejects" | "accepts" | "not probed";

export async function probeStrictValidation(client: EdgeloadClient, rawSpec: unknown, log: (line: string) => void = console.log): Promise<ProbeResult> {
  const parsed = parseRunSpec(rawSpec);
  if (!parsed.ok) return "not probed";
  const scenario = parsed.spec.scenario;
  const { clientId, clientSecret } = scenario?.options ?? {};
  if (scenario?.name !== "introspect" || !scenario.seed || !clientId || !clientSecret) return "not probed";
  try {
    const url = await client.seedUrl(scenario.seed, { expiresIn: "5m", format: "array", type: "wrong_audience" });
    const tokens = (await (await fetch(url.url, { signal: AbortSignal.timeout(10_000) })).json()) as unknown;
    const token = Array.isArray(tokens) ? tokens.find((t): t is string => typeof t === "string") : undefined;
    if (!token) return "not probed";
    const answer = await fetch(`${parsed.spec.target}/introspect`, {
      method: "POST",
      headers: { authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await answer.json()) as { active?: unknown };
    if (body.active !== true) return "rejects";
  } catch (error) {
    // The run goes ahead (it will say what is wrong with the provider), but a check that
    // could not be made is said, not taken for one that passed.
    log(`⚠ pre-flight: could not check whether ${parsed.spec.target} rejects a token minted for another audience: ${reasonOf(error)}`);
    return "not probed";
  }
  log(
    [
      `⚠ pre-flight: ${parsed.spec.target} answered active=true for a token minted for another audience:`,
      "  every wrong_audience and wrong_client token will count as a false positive, and the run will fail.",
      "  On Authrim, turn strict introspection validation on (and wait 60 s for its cache, docs/authrim.md):",
      `  curl -X PUT ${parsed.spec.target}/api/admin/settings/introspection-validation -H "authorization: Bearer $ADMIN_API_SECRET" \\`,
      `    -H "content-type: application/json" -d '{"strictValidation": true}'`,
    ].join("\n"),
  );
  return "accepts";
}

/** One line for a failed probe: undici keeps the network reason (ECONNREFUSED, …) in its cause. */
function reasonOf(error: unknown): string {
  const e = error as Error & { cause?: { code?: string } };
  return e.cause?.code ?? e.message.split("\n")[0]!;
}
