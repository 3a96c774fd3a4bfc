/**
 * k6's gracefulStop, beside real k6: one VU for 2 s of 1.2 s iterations, so the second
 * iteration is in progress when the scenario ends. With gracefulStop 0s it is interrupted
 * (k6: "1 complete and 1 interrupted"), with 3s it finishes and counts. Before edgeload read
 * gracefulStop it cut every iteration in progress at the end and counted 1 either way.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { runUnderEdgeload, runUnderK6 } from "./beside-k6.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

type Exported = { metrics: Record<string, { count?: number }> };

const SCRIPT = `
import http from "k6/http";
import { sleep } from "k6";

export const options = {
  scenarios: { a: { executor: "constant-vus", vus: 1, duration: "2s", gracefulStop: __ENV.GRACEFUL_STOP } },
};

export default function () {
  http.get(__ENV.BASE_URL + "/delay?ms=5");
  sleep(1.2);
}
`;

describeWithK6("gracefulStop beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-graceful-stop-");
  let dir: string;
  let script: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-graceful-stop-"));
    script = join(dir, "graceful.js");
    await writeFile(script, SCRIPT);
  });

  const env = (gracefulStop: string) => ["-e", `BASE_URL=${fixture.stack.targetUrl}`, "-e", `GRACEFUL_STOP=${gracefulStop}`];

  it.each([
    // Interrupted at the end: its request was sent, the iteration is not counted.
    ["0s", 1],
    // Finished within the graceful stop, 0.4 s after the end: counted.
    ["3s", 2],
  ])("with gracefulStop %s counts %d iterations of the 2 started, as k6 does", async (gracefulStop, iterations) => {
    const k6Run = (await runUnderK6<Exported>(k6, script, env(gracefulStop), join(dir, `k6-${gracefulStop}.json`))).summary;
    const edgeRun = await runUnderEdgeload<Exported>(fixture, script, env(gracefulStop), join(dir, `edge-${gracefulStop}.json`));
    expect(edgeRun.code, edgeRun.output).toBe(0);
    for (const s of [k6Run, edgeRun.summary]) {
      // The first iteration's 1.2 s leaves room for a second before 2 s, none for a third.
      expect(s.metrics.http_reqs?.count).toBe(2);
      expect(s.metrics.iterations?.count).toBe(iterations);
    }
  });
});
