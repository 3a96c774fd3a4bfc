/**
 * dashboards/grafana/edgeload.json against a real Prometheus: a run on the local stack is
 * scraped (GET /metrics while it runs, GET /v1/runs/:id/metrics after), and every query of
 * every panel — `$run` set to the run, `$__rate_interval` to a minute — must return series
 * for it; the latency percentiles must be finite. The `run` variable's own query must list
 * the run. Without a `prometheus` binary the test is skipped, saying so, or fails under CI.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import { useLocalStack } from "./local-stack-fixture.ts";
import { findPrometheus, freePort, PROMETHEUS, stopPrometheus } from "./prometheus.ts";
import { itWithBinary } from "../support/required-binaries.ts";

const found = findPrometheus();

interface Target {
  readonly expr: string;
  readonly datasource: { readonly uid: string };
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: Record<string, number>;
  readonly targets: readonly Target[];
}
interface Dashboard {
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly name: string; readonly definition?: string }[] };
}

const fixture = useLocalStack("edgeload-grafana-");
let prometheus: ChildProcess | undefined;
let promDir: string | undefined;
afterAll(() => stopPrometheus(prometheus, promDir));

async function query(base: string, promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const body = (await (await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as {
    status: string;
    data: { result: [] };
    error?: string;
  };
  if (body.status !== "success") throw new Error(`${promql}: ${body.error}`);
  return body.data.result;
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

itWithBinary("PROMETHEUS", "is a dashboard whose every panel query returns series for a run in a real Prometheus", found, { timeout: 90_000 }, async () => {
  const dashboard = JSON.parse(await readFile(join(PROJECT_ROOT, "dashboards/grafana/edgeload.json"), "utf8")) as Dashboard;
  // Its shape as Grafana imports it: unique panel ids, a place on the grid, the chosen data source.
  expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
  for (const p of dashboard.panels) {
    expect(Object.keys(p.gridPos).sort(), p.title).toEqual(["h", "w", "x", "y"]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template
    for (const t of p.targets) expect(t.datasource.uid, p.title).toBe("${datasource}");
  }
  expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "run"]);

  const { stack, client } = fixture;
  const api = new URL(stack.apiUrl);
  const port = await freePort();
  promDir = await mkdtemp(join(tmpdir(), "edgeload-grafana-tsdb-"));
  const config = (runId?: string) => `global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: edgeload-active
    metrics_path: /metrics
    authorization: { credentials: "${stack.token}" }
    static_configs: [{ targets: ["${api.host}"] }]
${runId ? `  - job_name: edgeload-run\n    metrics_path: /v1/runs/${runId}/metrics\n    authorization: { credentials: "${stack.token}" }\n    static_configs: [{ targets: ["${api.host}"] }]\n` : ""}`;
  await writeFile(join(promDir, "prometheus.yml"), config());
  prometheus = spawn(
    PROMETHEUS,
    [`--config.file=${join(promDir, "prometheus.yml")}`, `--storage.tsdb.path=${join(promDir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
    {
      stdio: ["ignore", "ignore", "ignore"],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  await eventually("Prometheus ready", async () => ((await fetch(`${base}/-/ready`).catch(() => null))?.ok ? true : undefined));

  const run = await client.createRun({
    name: "grafana e2e",
    target: stack.targetUrl,
    steps: [
      { name: "ok", path: "/delay?ms=3" },
      { name: "refused", path: "/delay?maxRps=0" },
    ],
    executor: "constant-arrival-rate",
    rate: 60,
    duration: "6s",
    shards: 2,
    regions: ["wnam", "weur"],
  });
  await writeFile(join(promDir, "prometheus.yml"), config(run.id));
  prometheus.kill("SIGHUP");
  await eventually("a scrape of the run while it runs", async () =>
    (await query(base, `edgeload_achieved_rate{run_id="${run.id}"} > 0`)).length ? true : undefined,
  );
  await client.waitForEnd(run.id, () => {}, 250);
  await eventually("a scrape after the end", async () => ((await query(base, `edgeload_run_exit_code{run_id="${run.id}"}`)).length ? true : undefined));

  const runs = (await (await fetch(`${base}/api/v1/label/run_id/values?match[]=edgeload_run_info`)).json()) as { data: string[] };
  expect(runs.data).toContain(run.id);

  const empty: string[] = [];
  for (const panel of dashboard.panels)
    for (const target of panel.targets) {
      const promql = target.expr.replaceAll("$run", run.id).replaceAll("$__rate_interval", "1m");
      const series = await query(base, promql);
      if (series.length === 0) empty.push(`${panel.title}: ${promql}`);
      if (promql.startsWith("histogram_quantile("))
        for (const s of series) expect(Number.isFinite(Number(s.value[1])), `${panel.title} ${JSON.stringify(s.metric)}`).toBe(true);
    }
  expect(empty).toEqual([]);
});
