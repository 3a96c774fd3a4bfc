/**
 * End to end: a short run on the local stack, then `edgeload report` as a real process
 * writing the report's files, and the coordinator serving the same report as HTML from
 * real workerd (where, unlike the vitest workers pool, code generation from strings fails).
 */
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLValidator } from "fast-xml-parser";
import { afterAll, expect, it } from "vitest";
import { runCli } from "./cli-process.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const fixture = useLocalStack("edgeload-report-");
let outDir: string;
afterAll(() => rm(outDir, { recursive: true, force: true }));

it("edgeload report writes report.md, its SVG charts, report.html and an index row; the API serves the HTML", async () => {
  const { stack, client } = fixture;
  const run = await client.createRun({
    name: "e2e report",
    target: stack.targetUrl,
    steps: [{ path: "/delay?ms=5", checks: [{ status: 200 }] }],
    executor: "constant-arrival-rate",
    rate: 50,
    duration: "3s",
    shards: 2,
    regions: ["wnam", "weur"],
    thresholds: { http_req_duration: ["p(95)<1000"] },
  });
  expect((await client.waitForEnd(run.id, () => {}, 250)).status).toBe("passed");

  outDir = await mkdtemp(join(tmpdir(), "edgeload-reports-"));
  const result = await runCli(["report", run.id, "--out", join(outDir, "e2e-run")], { EDGELOAD_URL: stack.apiUrl, EDGELOAD_TOKEN: stack.token });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const files = (await readdir(join(outDir, "e2e-run"))).sort();
  expect(files).toEqual(["error-rate.svg", "latency-histogram.svg", "latency.svg", "rate.svg", "report.html", "report.md"]);
  for (const svg of files.filter((f) => f.endsWith(".svg")))
    expect(XMLValidator.validate(await readFile(join(outDir, "e2e-run", svg), "utf8")), svg).toBe(true);

  // The markdown's whole-run p95 is the query's, as GET /v1/runs/:id/query gives it, to
  // the clock's step (workerd's whole milliseconds).
  const [overall] = (await client.query(run.id, { every: "run", metrics: "requests,p95" })).rows;
  const markdown = await readFile(join(outDir, "e2e-run", "report.md"), "utf8");
  expect(markdown).toContain(`| all | ${overall!.requests} |`);
  expect(
    markdown
      .split("\n")
      .find((l) => l.startsWith("| all |"))!
      .split(" | ")[6],
  ).toBe(String(Math.round(overall!.p95 as number)));
  const index = await readFile(join(outDir, "INDEX.md"), "utf8");
  expect(index).toContain(`| [e2e-run](e2e-run/report.md) |`);

  const response = await fetch(`${stack.apiUrl}/v1/runs/${run.id}/report`, { headers: { authorization: `Bearer ${stack.token}` } });
  expect(response.status).toBe(200);
  const html = await response.text();
  expect(html.match(/<svg /g)).toHaveLength(4);
  expect(html).toContain(run.id);
  // Rendered in workerd and in Node from the same data: the same bytes.
  expect(html).toBe(await readFile(join(outDir, "e2e-run", "report.html"), "utf8"));
});
