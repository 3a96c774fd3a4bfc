/**
 * `edgeload run --scenario browser-login` on the local stack, as a user runs it: the shard's
 * Chromium (Debian's, through the local Browser Run binding) goes through the local target's
 * own sign-in form and consent screen to the client's page, and the script exchanges the
 * code (k6-scripts/browser-login.js, workers/target/sign-in-flow.ts). Its checks pass and the
 * summary has each page's web vitals under its URL; the sign-in page held 3 s (the target's
 * `ms` knob, SIGN_IN_MS) fails the sign-in page's LCP threshold, exit 99. The run's web vitals
 * and its pages' bytes are on its dashboard (the custom metrics table) and in what a real
 * Prometheus scrapes of it (GET /v1/runs/:id/metrics; Debian's `prometheus`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { itWithBinary } from "../support/required-binaries.ts";
import { describeWithChromium, launchChromium } from "./chromium.ts";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";
import { findPrometheus, freePort, PROMETHEUS, stopPrometheus } from "./prometheus.ts";

type Stats = {
  avg?: number;
  min?: number;
  max?: number;
  "p(75)"?: number;
  passes?: number;
  fails?: number;
  count?: number;
  value?: number;
  thresholds?: Record<string, boolean>;
};
type Exported = { metrics: Record<string, Stats> };

describeWithChromium("edgeload run --scenario browser-login", (chromium) => {
  const fixture = useLocalStack("edgeload-browser-login-");
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "edgeload-browser-login-"));
  });

  let runs = 0;
  async function browserLogin(env: Record<string, string>): Promise<{ code: number; metrics: Exported["metrics"]; output: string }> {
    const out = join(dir, `summary-${++runs}.json`);
    const { stack } = fixture;
    const args = [
      "run",
      "--scenario",
      "browser-login",
      "--target",
      stack.targetUrl,
      "--admin-secret",
      stack.targetAdminSecret,
      "--quiet",
      "--summary-export",
      out,
    ];
    const r = await runCli([...args, ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`])], {
      EDGELOAD_URL: stack.apiUrl,
      EDGELOAD_TOKEN: stack.token,
    });
    const output = r.stdout + r.stderr;
    const summary = await readFile(out, "utf8").catch(() => {
      throw new Error(`edgeload exited ${r.code} without its summary:\n${output}`);
    });
    return { code: r.code, metrics: (JSON.parse(summary) as Exported).metrics, output };
  }

  const page = (path: string) => `${fixture.stack.targetUrl}${path}`;

  it("signs in, consents and exchanges the code in Chromium, with each page's web vitals under its URL and every threshold passed", async () => {
    const run = await browserLogin({ ITERATIONS: "2" });
    expect(run.code, run.output).toBe(0);
    const m = run.metrics;
    // 2 iterations × 5 checks (sign-in form, consent screen, client page, code and state, tokens).
    expect({ passes: m.checks?.passes, fails: m.checks?.fails }, run.output).toEqual({ passes: 10, fails: 0 });
    expect(m.browser_login_success?.passes, run.output).toBe(2);
    expect(m.browser_login_duration?.min).toBeGreaterThan(0);
    for (const path of ["/login", "/consent", "/app/callback"]) {
      for (const vital of ["ttfb", "fcp", "lcp"]) {
        const key = `browser_web_vital_${vital}{url:${page(path)}}`;
        expect(m[key]?.min, `${key} in\n${Object.keys(m).join("\n")}`).toBeGreaterThan(0);
        expect(Object.values(m[key]!.thresholds ?? {}), key).toEqual([false]);
      }
    }
    const signIn = (vital: string) => m[`browser_web_vital_${vital}{url:${page("/login")}}`]!;
    // The sign-in page's paints come after its first byte, within the "good" bound it is held to.
    expect(signIn("lcp").min).toBeGreaterThanOrEqual(signIn("ttfb").min!);
    expect(signIn("lcp").thresholds).toEqual({ "p(75)<2500": false });
    expect(m.browser_web_vital_lcp?.thresholds).toEqual({ "p(75)<2500": false });
    // The pages' bytes: each page's HTML at least, and the form posts and the token exchange's requests.
    expect(m.browser_data_received?.count, run.output).toBeGreaterThan(1000);
    expect(m.browser_data_sent?.count, run.output).toBeGreaterThan(1000);
  }, 90_000);

  /** The newest run on the stack: the one the CLI just made. */
  async function lastRunId(): Promise<string> {
    const { runs } = await fixture.client.listRuns(1);
    const id = runs[0]?.id;
    if (typeof id !== "string") throw new Error(`no run listed: ${JSON.stringify(runs)}`);
    return id;
  }

  it("shows the run's web vitals and page bytes on its dashboard", async () => {
    const run = await browserLogin({ ITERATIONS: "1" });
    expect(run.code, run.output).toBe(0);
    const id = await lastRunId();
    const browser = await launchChromium(chromium);
    try {
      const page = await browser.newPage();
      await page.goto((await fixture.client.dashboardLink({ run: id })).url);
      await page.getByTestId("final").waitFor({ state: "visible", timeout: 20_000 });
      const rows = await page.locator("#custom tbody tr").evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td.textContent)));
      const shown = new Map(rows.map(([name, type, value]) => [name, `${type} ${value}`]));
      for (const vital of ["ttfb", "fcp", "lcp"]) expect(shown.get(`browser_web_vital_${vital}`), JSON.stringify(rows)).toMatch(/^trend p95 \d+/);
      // CLS is a score, not a time: shown as a number, never "0 ms".
      expect(shown.get("browser_web_vital_cls"), JSON.stringify(rows)).toMatch(/^trend p95 \d+\.\d{3} · med \d+\.\d{3}$/);
      expect(shown.get("browser_data_received"), JSON.stringify(rows)).toMatch(/^counter [1-9]\d* /);
      expect(shown.get("browser_data_sent"), JSON.stringify(rows)).toMatch(/^counter [1-9]\d* /);
    } finally {
      await browser.close();
    }
  }, 90_000);

  let prometheus: ChildProcess | undefined;
  let promDir: string | undefined;
  afterAll(() => stopPrometheus(prometheus, promDir));

  itWithBinary(
    "PROMETHEUS",
    "exports the run's web vitals and page bytes to a Prometheus that scrapes it",
    findPrometheus(),
    { timeout: 120_000 },
    async () => {
      const run = await browserLogin({ ITERATIONS: "1" });
      expect(run.code, run.output).toBe(0);
      const id = await lastRunId();
      const { stack } = fixture;
      const port = await freePort();
      promDir = await mkdtemp(join(tmpdir(), "edgeload-browser-prom-"));
      await writeFile(
        join(promDir, "prometheus.yml"),
        `global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: edgeload-run
    metrics_path: /v1/runs/${id}/metrics
    authorization: { credentials: "${stack.token}" }
    static_configs: [{ targets: ["${new URL(stack.apiUrl).host}"] }]
`,
      );
      prometheus = spawn(
        PROMETHEUS,
        [`--config.file=${join(promDir, "prometheus.yml")}`, `--storage.tsdb.path=${join(promDir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
        { stdio: ["ignore", "ignore", "ignore"] },
      );
      const query = async (promql: string) => {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => null);
        const body = (await response?.json().catch(() => null)) as {
          data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
        } | null;
        return body?.data?.result ?? [];
      };
      const deadline = Date.now() + 30_000;
      while (!(await query(`edgeload_run_info{run_id="${id}"}`)).length) {
        if (Date.now() > deadline) throw new Error(`Prometheus never scraped run ${id}'s metrics`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const counts = await query(`{__name__=~"edgeload_custom_browser_web_vital_.+_count",run_id="${id}"}`);
      const families = new Set(counts.map((r) => r.metric.__name__));
      // Times in seconds; CLS, a score, as itself (core/formats/prometheus-text-writer.ts).
      for (const vital of ["ttfb", "fcp", "lcp"])
        expect(families, [...families].join(", ")).toContain(`edgeload_custom_browser_web_vital_${vital}_seconds_count`);
      expect(families, [...families].join(", ")).not.toContain("edgeload_custom_browser_web_vital_cls_seconds_count");
      // One LCP sample of each page the flow lands on (the sign-in form, the consent screen, the client's page).
      const lcp = counts.filter((r) => r.metric.__name__ === "edgeload_custom_browser_web_vital_lcp_seconds_count");
      expect(lcp.reduce((sum, r) => sum + Number(r.value[1]), 0)).toBeGreaterThanOrEqual(3);
      const bytes = await query(`{__name__=~"edgeload_custom_browser_data_(received|sent).*",run_id="${id}"}`);
      expect(new Set(bytes.map((r) => (r.metric.__name__ ?? "").replace(/_total$/, ""))), JSON.stringify(bytes)).toEqual(
        new Set(["edgeload_custom_browser_data_received", "edgeload_custom_browser_data_sent"]),
      );
    },
  );

  it("fails the sign-in page's LCP threshold when the page is held 3 s by the target's knob, exit 99", async () => {
    const run = await browserLogin({ ITERATIONS: "1", SIGN_IN_MS: "3000" });
    expect(run.code, run.output).toBe(99);
    const m = run.metrics;
    const lcp = m[`browser_web_vital_lcp{url:${page("/login")}}`]!;
    expect(lcp.thresholds).toEqual({ "p(75)<2500": true });
    expect(lcp.min).toBeGreaterThanOrEqual(3000);
    // Only the slow page fails: the flow itself still signs in.
    expect(m[`browser_web_vital_lcp{url:${page("/consent")}}`]!.thresholds).toEqual({ "p(75)<2500": false });
    expect({ passes: m.checks?.passes, fails: m.checks?.fails }).toEqual({ passes: 5, fails: 0 });
  }, 90_000);
});
