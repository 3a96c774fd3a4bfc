/**
 * `edgeload dev`: the local stack (coordinator, shards, D1, R2 and the Authrim-style
 * target in workerd) until Ctrl-C, recorded in .edgeload/dev.json for the other commands.
 */
import { EdgeloadClient } from "./client.ts";
import { CliError, EXIT } from "./connection.ts";
import { parseCommand } from "./option-table.ts";
import { DEV_COMMAND } from "./tables/stack-tables.ts";

export async function devCommand(args: readonly string[]): Promise<number> {
  const { values } = parseCommand(DEV_COMMAND, args);
  const port = (flag: "api-port" | "target-port") => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CliError(`--${flag}: "${values[flag]}" is not a port (1–65535)`, EXIT.invalidConfig);
    return n;
  };
  // wrangler is loaded only by the commands that start a stack: it installs its own
  // signal handlers, which must not pre-empt `edgeload run`'s Ctrl-C (abort the run).
  const { startLocalStack } = await import("./local-stack.ts");
  const stack = await startLocalStack({ apiPort: port("api-port"), targetPort: port("target-port"), writeDevFile: true });
  console.log(`edgeload local stack is up (state in .edgeload/state)
  API      ${stack.apiUrl}
  target   ${stack.targetProxyUrl}   (knobs: /delay?ms=20&jitter=5&status=200&size=1024&fail=0.01)
           ${stack.targetUrl}   (the same target without wrangler's dev proxy: use it for high rates)
  token    ${stack.token}
  dashboard ${(await new EdgeloadClient(stack.apiUrl, stack.token).dashboardLink()).url}
           (open within 10 minutes; \`edgeload dashboard\` prints a fresh one)

  export EDGELOAD_URL=${stack.apiUrl} EDGELOAD_TOKEN=${stack.token}
  edgeload run --target '${stack.targetProxyUrl}/delay?ms=20' --rate 200 --duration 15s

Ctrl-C stops it.`);
  // Deployed, the cron trigger wakes the coordinator every minute; locally this loop does.
  const ticks = everyMinute(() => stack.tick().catch((error: unknown) => console.error(`edgeload dev: ${(error as Error).message}`)));
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  ticks.stop();
  console.log("\nstopping…");
  await stack.stop();
  return EXIT.ok;
}

/** Calls `tick` at the start of every minute (the schedules' cron is `* * * * *`, UTC). */
function everyMinute(tick: () => unknown): { stop(): void } {
  let timer: NodeJS.Timeout;
  const arm = () => {
    timer = setTimeout(
      () => {
        tick();
        arm();
      },
      60_000 - (Date.now() % 60_000),
    );
  };
  arm();
  return { stop: () => clearTimeout(timer) };
}
