/**
 * A k6 script's VUs are k6's VUs: two scenarios running at the same time have VUs of their
 * own (unique `exec.vu.idInTest`), each VU sleeps as its script says, and each iteration
 * of a scenario has its own `exec.scenario.iterationInTest` — run under real k6 and under
 * edgeload against the same local target. Numbering each scenario's VUs from 1 once made
 * the two scenarios' VU 2 one object in the script's isolate: its sleeps were skipped and
 * the script below sent 30 requests where k6 sends 12.
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

const SCENARIOS = ["a", "b"] as const;
const VUS = 2;
const DURATION_S = 3;
const SLEEP_S = 1;

/** Two constant-vus scenarios at once; each iteration one GET, then a sleep. */
const SCRIPT = `
import http from "k6/http";
import { sleep } from "k6";
import { scenario, vu } from "k6/execution";
import { Counter } from "k6/metrics";

const vus = new Counter("vu_seen");
const iterations = new Counter("iteration_seen");
export const options = {
  scenarios: { ${SCENARIOS.map((s) => `${s}: { executor: "constant-vus", vus: ${VUS}, duration: "${DURATION_S}s" }`).join(", ")} },
};

export default function () {
  vus.add(1, { type: scenario.name + "-" + vu.idInTest });
  iterations.add(1, { type: scenario.name + "-" + scenario.iterationInTest });
  http.get(__ENV.BASE_URL + "/delay?ms=5");
  sleep(${SLEEP_S});
}
`;

describeWithK6("a k6 script's VUs beside k6", (k6) => {
  const fixture = useLocalStack("edgeload-script-vus-");
  let dir: string;
  let script: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-script-vus-"));
    script = join(dir, "two-scenarios.js");
    await writeFile(script, SCRIPT);
  });

  async function underK6(): Promise<Exported> {
    const out = join(dir, "k6.json");
    await promisify(execFile)(k6, ["run", "--quiet", "--summary-export", out, "-e", `BASE_URL=${fixture.stack.targetUrl}`, script], {
      maxBuffer: 16 << 20,
      env: { ...process.env, K6_NO_USAGE_REPORT: "true" },
    });
    return JSON.parse(await readFile(out, "utf8")) as Exported;
  }

  async function underEdgeload(): Promise<Exported> {
    const out = join(dir, "edge.json");
    const r = await runCli(["run", script, "--quiet", "--summary-export", out, "-e", `BASE_URL=${fixture.stack.targetUrl}`], {
      EDGELOAD_URL: fixture.stack.apiUrl,
      EDGELOAD_TOKEN: fixture.stack.token,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return JSON.parse(await readFile(out, "utf8")) as Exported;
  }

  /** The `{type:…}` series of a counter, by type: `vu_seen{type:a-3}` → ["a-3", count]. */
  const series = (summary: Exported, metric: string) =>
    Object.entries(summary.metrics).flatMap(([key, m]) => {
      const match = new RegExp(`^${metric}\\{type:(.*)\\}$`).exec(key);
      return match ? [[match[1]!, m.count ?? 0] as const] : [];
    });

  it("sends what k6 sends for two scenarios at once, each VU its own and each iteration numbered once", async () => {
    const k6Run = await underK6();
    const edge = await underEdgeload();
    // Each VU runs back-to-back iterations of one request and a SLEEP_S sleep, starting
    // none after the scenario's end: ceil(duration / sleep) iterations, one request each.
    const expected = SCENARIOS.length * VUS * Math.ceil(DURATION_S / SLEEP_S);
    const requests = (s: Exported) => s.metrics.http_reqs?.count ?? 0;
    // A loaded machine may start an iteration late and lose the last one of a VU or two;
    // nothing may send more than its sleeps allow (skipped sleeps sent 30).
    for (const s of [k6Run, edge]) {
      expect(requests(s)).toBeLessThanOrEqual(expected);
      expect(requests(s)).toBeGreaterThanOrEqual(expected - VUS * SCENARIOS.length);
    }
    expect(Math.abs(requests(edge) - requests(k6Run))).toBeLessThanOrEqual(VUS * SCENARIOS.length);

    // Every VU id belongs to one scenario, and there are as many as k6 starts (VUS each).
    const seen = series(edge, "vu_seen").map(([type]) => type.split("-") as [string, string]);
    const ids = seen.map(([, id]) => Number(id));
    expect(new Set(ids).size, JSON.stringify(seen)).toBe(ids.length);
    expect([...ids].sort((x, y) => x - y)).toEqual(Array.from({ length: SCENARIOS.length * VUS }, (_, i) => i + 1));
    for (const name of SCENARIOS) expect(seen.filter(([s]) => s === name)).toHaveLength(VUS);

    // Each iterationInTest of a scenario was seen once; one per iteration started (one
    // request each: an iteration cut in its last sleep is not in `iterations`).
    const numbered = series(edge, "iteration_seen");
    expect(
      numbered.filter(([, n]) => n !== 1),
      JSON.stringify(numbered),
    ).toEqual([]);
    expect(numbered).toHaveLength(requests(edge));
  });
});
