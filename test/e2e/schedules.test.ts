/**
 * Scheduled runs on the local stack as the CLI starts it: `edgeload schedule add` as a real
 * process, the coordinator's cron trigger fired through Miniflare (what `edgeload dev` does
 * every minute), a turn's run against the loopback target, and its verdict at the next tick.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-e2e-schedules-");

describe("a schedule on the local stack", () => {
  it("is added with the CLI, takes its turn when the cron trigger fires, and judges the run at the next tick", async () => {
    const { stack, client, stateDir } = fixture;
    const cli = (args: string[]) => runCli(args, { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
    const spec = join(stateDir, "scheduled.json");
    await writeFile(
      spec,
      JSON.stringify({
        name: "e2e scheduled",
        target: stack.targetUrl,
        steps: [{ path: "/delay?ms=5" }],
        executor: "constant-arrival-rate",
        rate: 20,
        duration: "2s",
        shards: 1,
        regions: ["wnam"],
      }),
    );
    const added = await cli(["schedule", "add", "e2e", "--cron", "* * * * *", "--spec", spec, "--format", "json"]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    const created = JSON.parse(added.stdout) as { id: string; nextDueAt: string; estimate: { turnsPer30Days: number } };
    expect(created.estimate.turnsPer30Days).toBe(43_200);
    const dueMs = Date.parse(created.nextDueAt);

    await stack.tick(dueMs);
    const first = (await client.schedules<{ turns: { outcome: string; runId: string }[] }>("GET", created.id)).turns[0]!;
    expect(first.outcome).toBe("started");
    expect((await client.getRun(first.runId)).id).toBe(first.runId);
    for (
      let view = await client.getRun(first.runId);
      !["passed", "failed", "inconclusive", "aborted", "error"].includes(view.status);
      view = await client.getRun(first.runId)
    )
      await new Promise((r) => setTimeout(r, 250));

    await cli(["schedule", "pause", created.id]);
    await stack.tick(dueMs + 60_000);
    const shown = await cli(["schedule", "show", created.id, "--format", "table"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`started\\s+${first.runId}\\s+passed\\s+no baseline yet`));
    expect((await cli(["schedule", "rm", created.id])).code).toBe(0);
  });
});
