/**
 * The GitHub Actions workflows in examples/ci, run as a runner would run their shell
 * steps — each `run:` in bash with the job's and the step's `env:`, `$GITHUB_OUTPUT` and
 * `$GITHUB_STEP_SUMMARY` files, `${{ … }}` filled from the repository's settings and the
 * earlier steps' outputs — against the local stack. Steps that `uses:` an action (checkout,
 * setup-node, upload-artifact) are the runner's own and are skipped; so is the npm install
 * this checkout has already done.
 */
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { PROJECT_ROOT } from "../../cli/local-stack.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

interface Step {
  readonly name?: string;
  readonly id?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly env?: Record<string, string>;
  readonly if?: string;
}
interface Workflow {
  readonly jobs: Record<string, { readonly env?: Record<string, string>; readonly steps: readonly Step[] }>;
}

interface JobResult {
  readonly code: number;
  readonly output: string;
  readonly stepSummary: string;
  readonly ran: readonly string[];
}

const fixture = useLocalStack("edgeload-ci-examples-");
let target: Server;
let targetUrl: string;
let work: string;

beforeAll(async () => {
  target = createServer((_request, response) => setTimeout(() => response.end("ok"), 3));
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
  // A checkout of the repository as the runner has it, without copying it: the files the
  // jobs read, by symbolic link; what they write (spec.json, run.json, summary.json) stays here.
  work = await mkdtemp(join(tmpdir(), "edgeload-ci-work-"));
  for (const entry of ["package.json", "node_modules", "cli", "scripts", "examples"]) await symlink(join(PROJECT_ROOT, entry), join(work, entry));
});

afterAll(async () => {
  target?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** `${{ vars.X }}`, `${{ secrets.X }}` and `${{ steps.ID.outputs.X }}`; anything else is refused. */
function expand(
  text: string,
  context: { vars: Record<string, string>; secrets: Record<string, string>; outputs: Record<string, Record<string, string>> },
): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expression: string) => {
    const [scope, a, b, c] = expression.split(".");
    if (scope === "vars" && a && context.vars[a] !== undefined) return context.vars[a]!;
    if (scope === "secrets" && a && context.secrets[a] !== undefined) return context.secrets[a]!;
    if (scope === "steps" && a && b === "outputs" && c && context.outputs[a]?.[c] !== undefined) return context.outputs[a]![c]!;
    throw new Error(`the workflow uses \${{ ${expression} }}, which this runner does not know`);
  });
}

/** Runs the shell steps of a workflow's one job in order, stopping at the first that fails. */
async function runJob(
  file: string,
  settings: { vars: Record<string, string>; secrets: Record<string, string> },
  options: { skip?: RegExp; jobEnv?: Record<string, string> } = {},
): Promise<JobResult> {
  const skip = options.skip ?? /^$/;
  const workflow = parse(await readFile(join(PROJECT_ROOT, "examples/ci", file), "utf8")) as Workflow;
  const [job] = Object.values(workflow.jobs);
  const context = { ...settings, outputs: {} as Record<string, Record<string, string>> };
  const stepSummary = join(work, `${file}.summary.md`);
  await writeFile(stepSummary, "");
  let output = "";
  const ran: string[] = [];
  for (const [i, step] of job!.steps.entries()) {
    if (!step.run || (step.name && skip.test(step.name))) continue;
    const outputFile = join(work, `${file}.${i}.output`);
    await writeFile(outputFile, "");
    const env: Record<string, string> = { ...(process.env as Record<string, string>), GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: stepSummary, CI: "true" };
    for (const [k, v] of Object.entries({ ...job!.env, ...options.jobEnv, ...step.env })) env[k] = expand(String(v), context);
    const result = await bash(step.run, env);
    ran.push(step.name ?? step.run);
    output += result.output;
    if (step.id)
      context.outputs[step.id] = Object.fromEntries(
        (await readFile(outputFile, "utf8"))
          .split("\n")
          .filter(Boolean)
          .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
      );
    if (result.code !== 0) return { code: result.code, output, stepSummary: await readFile(stepSummary, "utf8"), ran };
  }
  return { code: 0, output, stepSummary: await readFile(stepSummary, "utf8"), ran };
}

/** GitHub runs `run:` as `bash -e {0}` in the checkout: here `work`, which links to this one. */
function bash(script: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-e", "-c", script],
      { cwd: work, env: { ...env, PATH: `${join(PROJECT_ROOT, "node_modules/.bin")}:${env.PATH}` }, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : 1) : 0;
        resolve({ code, output: stdout + stderr });
      },
    );
  });
}

const settings = () => ({ vars: { EDGELOAD_URL: fixture.stack.apiUrl, TARGET_URL: targetUrl }, secrets: { EDGELOAD_TOKEN: fixture.stack.token } });

describe("examples/ci", () => {
  it("curl only: starts the run, waits for its verdict and passes the job when the thresholds pass", async () => {
    const job = await runJob("github-actions-curl.yml", settings());
    expect(job.code, job.output).toBe(0);
    expect(job.ran).toEqual(["Start the run", "Wait for the verdict"]);
    expect(job.stepSummary).toMatch(/^r-[a-z0-9]+-[0-9a-f]+: passed, thresholds passed: true, exit code 0$/m);
    const summary = JSON.parse(await readFile(join(work, "summary.json"), "utf8"));
    expect(summary.metrics.http_reqs.count).toBe(200); // 20/s for 10 s
  }, 90_000);

  it("curl only: fails the job with k6's exit code 99 when a threshold fails", async () => {
    const smoke = JSON.parse(await readFile(join(PROJECT_ROOT, "examples/ci/smoke.json"), "utf8"));
    await writeFile(join(work, "failing.json"), JSON.stringify({ ...smoke, duration: "2s", thresholds: { http_reqs: ["count<1"] } })); // a count: never inconclusive
    const job = await runJob("github-actions-curl.yml", settings(), { jobEnv: { SPEC: "failing.json" } });
    expect(job.code, job.output).toBe(99);
    expect(job.stepSummary).toMatch(/: failed, thresholds passed: false, exit code 99$/m);
  }, 90_000);

  it("with the CLI: runs the spec against the target from the settings and exits 0", async () => {
    const job = await runJob("github-actions-cli.yml", settings(), { skip: /^Install edgeload$/ });
    expect(job.code, job.output).toBe(0);
    expect(job.ran).toEqual(["Run the load test"]);
    expect(JSON.parse(await readFile(join(work, "summary.json"), "utf8")).metrics.http_reqs.count).toBe(200);
  }, 90_000);
});
