/**
 * k6's gracefulStop, beside real k6: one VU for 2 s of 1.2 s iterations, so the second
 * iteration is in progress when the scenario ends. With gracefulStop 0s it is interrupted
 * (k6: "1 complete and 1 interrupted"), with 3s it finishes and counts. Before edgeload read
 * gracefulStop it cut every iteration in progress at the end and counted 1 either way.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
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

  async function underK6(gracefulStop: string): Promise<Exported> {
    const out = join(dir, `k6-${gracefulStop}.json`);
    await promisify(execFile)(k6, ["run", "--quiet", "--summary-export", out, ...env(gracefulStop), script], {
      maxBuffer: 16 << 20,
      env: { ...process.env, K6_NO_USAGE_REPORT: "true" },
    });
    return JSON.parse(await readFile(out, "utf8")) as Exported;
  }

  async function underEdgeload(gracefulStop: string): Promise<Exported> {
    const out = join(dir, `edge-${gracefulStop}.json`);
    const r = await runCli(["run", script, "--quiet", "--summary-export", out, ...env(gracefulStop)], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return JSON.parse(await readFile(out, "utf8")) as Exported;
  }

  it.each([
    // Interrupted at the end: its request was sent, the iteration is not counted.
    ["0s", 1],
    // Finished within the graceful stop, 0.4 s after the end: counted.
    ["3s", 2],
  ])("with gracefulStop %s counts %d iterations of the 2 started, as k6 does", async (gracefulStop, iterations) => {
    const k6Run = await underK6(gracefulStop);
    const edge = await underEdgeload(gracefulStop);
    for (const s of [k6Run, edge]) {
      // The first iteration's 1.2 s leaves room for a second before 2 s, none for a third.
      expect(s.metrics.http_reqs?.count).toBe(2);
      expect(s.metrics.iterations?.count).toBe(iterations);
    }
  });
});
