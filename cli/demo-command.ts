/**
 * `edgeload demo`: the whole path on this machine, with nothing to set up.
 */
import type { Summary } from "../core/run/summary.ts";
import { renderScenarioTable } from "../core/run/summary-text.ts";
import { EdgeloadClient } from "./client.ts";
import { EXIT } from "./exit-codes.ts";
import { followRun } from "./follow-run.ts";
import type { LocalStack } from "./local-stack.ts";
import { parseCommand } from "./option-table.ts";
import { DEMO_PRESET, DEMO_SCENARIOS, demoSpec } from "./quick-spec.ts";
import { DEMO_COMMAND } from "./tables/stack-tables.ts";

/**
 * The demo, end to end against the local Authrim-style target: seed an access-token set
 * (signed with the target's key, revoked ones revoked, verified by introspection), store it
 * in R2 and print its signed TOKEN_URL, then run the userinfo and introspect scenarios at
 * a shortened rps100 preset and print each summary and a per-scenario table.
 */
export async function demoCommand(args: readonly string[]): Promise<number> {
  const { values } = parseCommand(DEMO_COMMAND, args);
  console.log("starting the local stack (coordinator, shards, D1, R2 and the Authrim-style target in workerd)…");
  const started = Date.now();
  let stack: LocalStack | undefined;
  try {
    const { startLocalStack } = await import("./local-stack.ts");
    stack = await startLocalStack({ writeDevFile: false });
    console.log(`  API ${stack.apiUrl}   target ${stack.targetUrl}   (up in ${((Date.now() - started) / 1000).toFixed(1)}s)`);
    const client = new EdgeloadClient(stack.apiUrl, stack.token);

    const seed = "demo-tokens";
    console.log(
      `\nseeding ${DEMO_TOKENS} access tokens against the target (Authrim's mix: valid, valid_exchanged, expired, revoked, wrong_audience, wrong_client)…`,
    );
    const { seedAccessTokens } = await import("../seeds/access-tokens.ts");
    const doc = await seedAccessTokens({
      baseUrl: stack.targetUrl,
      adminSecret: stack.targetAdminSecret,
      ...stack.targetClient,
      count: DEMO_TOKENS,
      users: 50,
      testName: "edgeload demo",
    });
    const stored = await client.uploadSeed(seed, doc);
    const url = await client.seedUrl(seed, { expiresIn: "1h" });
    const v = doc.metadata.verification;
    console.log(`  seed set ${seed}: ${stored.total} tokens ${JSON.stringify(stored.counts)}`);
    console.log(`  verified by introspection: ${v.verified} correct, ${v.incorrect} incorrect`);
    console.log(`  TOKEN_URL (k6 can read it; expires ${url.expiresAt}):\n    ${url.url}`);

    const results: Array<{ scenario: string; exit: number; summary: Summary }> = [];
    for (const scenario of DEMO_SCENARIOS) {
      console.log(`\n── ${scenario}: preset ${DEMO_PRESET.preset} shortened ×${DEMO_PRESET.durationScale} ──`);
      const summaryExport = values["summary-export"]?.replace(/(\.json)?$/, `.${scenario}$1`);
      const ledger = { origin: stack.targetUrl, adminSecret: stack.targetAdminSecret };
      const result = await followRun(client, demoSpec(scenario, stack.targetUrl, seed, stack.targetClient), {
        summaryExport,
        quiet: values.quiet,
        ledger,
        stackStops: true,
      });
      results.push({ scenario, ...result });
    }
    console.log(renderScenarioTable(results.map((r) => r.summary)));
    return results.reduce((worst, r) => (r.exit !== EXIT.ok ? r.exit : worst), EXIT.ok as number);
  } finally {
    await stack?.stop();
  }
}

const DEMO_TOKENS = 600;
