/**
 * The public k6-script corpus (issue 36): every script of test/fixtures/k6-corpus/corpus.json
 * runs under real k6 v1.8.1 and under `edgeload run` against the same loopback targets, with the
 * same overrides: httpbin.org's own program (PyPI's httpbin, installed once into .cache/httpbin
 * and started here: test/support/k6-corpus/real-targets.ts) for the scripts written against
 * httpbin, and look-alikes (test/support/k6-corpus/targets.ts) for the services whose program
 * cannot be installed here (issue 53). Without httpbin the suite is skipped, or fails under CI. Per script, the exit code, the
 * checks verdict (counts within a tolerance), each threshold's verdict and the script's own
 * metrics must agree, or the difference must be listed with its reason in
 * expected-differences.ts. At least 90 % of the scripts must get k6's exit code and checks
 * verdict, and docs/k6.md must hold the table of this run (`npm run docs:k6-corpus` writes it
 * from the results this test leaves in .cache/k6-corpus/results.json).
 */
import { readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import { corpusSection, docsSection, RESULTS_FILE, readSources } from "../support/k6-corpus/docs-table.ts";
import { EXPECTED_DIFFERENCES } from "../support/k6-corpus/expected-differences.ts";
import { type CorpusResult, compareResult, differences } from "../support/k6-corpus/outcome.ts";
import { findHttpbin, type RealTarget, startHttpbin } from "../support/k6-corpus/real-targets.ts";
import { CORPUS_DIR, type CorpusManifest, underEdgeload, underK6 } from "../support/k6-corpus/run-corpus.ts";
import { type CorpusTargets, startCorpusTargets } from "../support/k6-corpus/targets.ts";
import { describeWithBinary } from "../support/required-binaries.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const manifest = JSON.parse(readFileSync(join(CORPUS_DIR, "corpus.json"), "utf8")) as CorpusManifest;
/** K6_CORPUS_ONLY=name,name runs those scripts only, when working on one (the whole-corpus checks then fail). */
const only = process.env.K6_CORPUS_ONLY?.split(",");
const chosen = manifest.scripts.filter((s) => !only || only.includes(s.name));
/** Scripts run at once: two keep each run's timing sane on a 2-core machine shared with the stack. */
const CONCURRENCY = 2;

describeWithK6("the public k6-script corpus under k6 and edgeload run", (k6) =>
  describeWithBinary("HTTPBIN", "against httpbin.org's own program and the look-alikes", findHttpbin({ install: true }), (python) => corpus(k6, python)),
);

function corpus(k6: string, python: string): void {
  const fixture = useLocalStack("edgeload-k6-corpus-");
  let targets: CorpusTargets | undefined;
  let httpbin: RealTarget | undefined;
  const results = new Map<string, CorpusResult>();

  beforeAll(async () => {
    [targets, httpbin] = await Promise.all([startCorpusTargets(), startHttpbin(python)]);
    const origins = { httpbin: httpbin.origin, lookAlike: targets.origin };
    const queue = [...chosen];
    const api = { url: fixture.stack.apiUrl, token: fixture.stack.token };
    const worker = async () => {
      for (let script = queue.shift(); script; script = queue.shift()) {
        const k6Outcome = await underK6(k6, script, origins);
        const edgeOutcome = await underEdgeload(api, script, origins);
        results.set(script.name, { name: script.name, counts: script.counts ?? "timing", k6: k6Outcome, edgeload: edgeOutcome });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await mkdir(join(PROJECT_ROOT, ".cache/k6-corpus"), { recursive: true });
    const ordered = manifest.scripts.map((s) => results.get(s.name));
    await writeFile(RESULTS_FILE, `${JSON.stringify(ordered, null, 2)}\n`);
  }, 20 * 60_000);

  afterAll(async () => {
    await Promise.all([targets?.stop(), httpbin?.stop()]);
  });

  it("records each script's source: repository, path, a 40-hex commit, an SPDX licence, and files that exist", () => {
    expect(manifest.scripts.length).toBeGreaterThanOrEqual(30);
    for (const s of [...manifest.scripts, ...manifest.modules]) {
      expect(s.repository, JSON.stringify(s)).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(s.commit, JSON.stringify(s)).toMatch(/^[0-9a-f]{40}$/);
      expect(["MIT", "Apache-2.0", "ISC", "AGPL-3.0-only", "CC-BY-4.0"], JSON.stringify(s)).toContain(s.licence);
      readFileSync(join(CORPUS_DIR, s.file));
    }
    expect(new Set(manifest.scripts.map((s) => s.name)).size).toBe(manifest.scripts.length);
  });

  it.each(chosen.map((s) => [s.name]))("%s: ends under edgeload as under k6, or differs as listed", (name) => {
    const result = results.get(name);
    if (!result) throw new Error(`${name} did not run`);
    const expected = EXPECTED_DIFFERENCES[name];
    const same = compareResult(result).same;
    const told = `${differences(result.k6, result.edgeload, result.counts).join("; ")}\n--- k6:\n${result.k6.tail}\n--- edgeload:\n${result.edgeload.tail}`;
    if (expected === undefined) expect(same, `${name} differs and is not in expected-differences.ts: ${told}`).toBe(true);
    else expect(same, `${name} is listed as differing (${expected}) but now ends as under k6: delete its line`).toBe(false);
  });

  it("refuses a script only before any load, naming the import, call or threshold's metric it cannot run (exit 104)", () => {
    const refused = [...results.values()].filter((r) => r.edgeload.exit === 104);
    for (const r of refused) {
      expect(r.edgeload.iterations, r.name).toBe(0);
      expect(r.edgeload.tail, r.name).toMatch(
        /cannot run on edgeload:\n\s+- .*(import of \S+|a callback .* passed to \S+)|invalid run spec from \S+:\n\s+- thresholds\.\S+: unknown metric/,
      );
    }
  });

  it("gives ≥ 90 % of the scripts k6's exit code and checks verdict", () => {
    const parity = [...results.values()].filter((r) => compareResult(r).parity).length;
    expect(parity / manifest.scripts.length, `${parity} of ${manifest.scripts.length}`).toBeGreaterThanOrEqual(0.9);
  });

  it("is the run docs/k6.md's compatibility table shows (npm run docs:k6-corpus)", async () => {
    const docs = await readFile(join(PROJECT_ROOT, "docs/k6.md"), "utf8");
    const ordered = manifest.scripts.map((s) => results.get(s.name)).filter((r) => r !== undefined);
    expect(docsSection(docs)).toBe(corpusSection(manifest, ordered, readSources(manifest)));
  });
}
