/**
 * The public k6 browser-script corpus (issue 52): every script of
 * test/fixtures/k6-browser-corpus/corpus.json (grafana/k6's examples/browser/) runs under real
 * k6 v1.8.1, whose browser module drives Debian's Chromium, and under `edgeload run`, whose
 * shard drives the local Browser Run binding (the same Chromium), against look-alike pages
 * served on loopback (test/support/k6-browser-corpus/site.ts). Per script, the exit code, the
 * checks verdict and counts (exactly, unless the script's counts are "timing") and each
 * threshold's verdict must agree, or the difference must be
 * listed with its reason in expected-differences.ts. At least 90 % of the scripts must get k6's
 * exit code and checks verdict, or differ only where edgeload's verdict is inconclusive by
 * design (exit 75: a threshold with no samples, which k6 passes; the table gives both
 * figures), and docs/k6.md's browser section must hold the table of this
 * run (`node test/support/k6-browser-corpus/docs-table.ts` writes it from the results this
 * test leaves in .cache/k6-browser-corpus/results.json).
 */
import { readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/paths.ts";
import { type CorpusResult, compareResult, differences, type Outcome } from "../support/k6-corpus/outcome.ts";
import { browserCorpusSection, docsSection, RESULTS_FILE } from "../support/k6-browser-corpus/docs-table.ts";
import { EXPECTED_DIFFERENCES, onlyNoDataVerdict } from "../support/k6-browser-corpus/expected-differences.ts";
import {
  BROWSER_CORPUS_DIR,
  type BrowserCorpusManifest,
  type BrowserCorpusScript,
  underEdgeload,
  underK6,
} from "../support/k6-browser-corpus/run-browser-corpus.ts";
import { type BrowserCorpusSite, startBrowserCorpusSite } from "../support/k6-browser-corpus/site.ts";
import { describeWithChromium } from "./chromium.ts";
import { describeWithK6 } from "./k6.ts";
import { useLocalStack } from "./local-stack-fixture.ts";

const manifest = JSON.parse(readFileSync(join(BROWSER_CORPUS_DIR, "corpus.json"), "utf8")) as BrowserCorpusManifest;
/** K6_BROWSER_CORPUS_ONLY=name,name runs those scripts only, when working on one (the whole-corpus checks then fail). */
const only = process.env.K6_BROWSER_CORPUS_ONLY?.split(",");
const chosen = manifest.scripts.filter((s) => !only || only.includes(s.name));
/** edgeload runs at once, beside one k6 run: three Chromiums on this 2-core machine keep each run's timing sane. */
const EDGELOAD_LANES = 2;

describeWithK6("the public k6 browser-script corpus under k6 and edgeload run", (k6) => describeWithChromium("with Debian's Chromium", () => corpus(k6)));

function corpus(k6: string): void {
  const fixture = useLocalStack("edgeload-k6-browser-corpus-");
  let site: BrowserCorpusSite | undefined;
  const results = new Map<string, CorpusResult>();

  beforeAll(async () => {
    site = await startBrowserCorpusSite();
    const origin = site.origin;
    const api = { url: fixture.stack.apiUrl, token: fixture.stack.token };
    // k6 is quicker than a run on the stack: one lane runs every script under k6 while two run them under edgeload.
    const k6Outcomes = new Map<string, Outcome>();
    const edgeOutcomes = new Map<string, Outcome>();
    const lane = (tool: (script: BrowserCorpusScript) => Promise<Outcome>, into: Map<string, Outcome>, queue: BrowserCorpusScript[]) => async () => {
      for (let script = queue.shift(); script; script = queue.shift()) into.set(script.name, await tool(script));
    };
    const k6Lane = lane((s) => underK6(k6, s, origin), k6Outcomes, [...chosen]);
    const edgeLane = lane((s) => underEdgeload(api, s, origin), edgeOutcomes, [...chosen]);
    await Promise.all([k6Lane(), ...Array.from({ length: EDGELOAD_LANES }, () => edgeLane())]);
    for (const { name, counts } of chosen) {
      const k6Outcome = k6Outcomes.get(name);
      const edgeOutcome = edgeOutcomes.get(name);
      if (k6Outcome && edgeOutcome) results.set(name, { name, counts: counts ?? "exact", k6: k6Outcome, edgeload: edgeOutcome });
    }
    await mkdir(join(PROJECT_ROOT, ".cache/k6-browser-corpus"), { recursive: true });
    await writeFile(
      RESULTS_FILE,
      `${JSON.stringify(
        manifest.scripts.map((s) => results.get(s.name) ?? null),
        null,
        2,
      )}\n`,
    );
  }, 10 * 60_000);

  afterAll(async () => {
    await site?.stop();
  });

  it("records each script's source: grafana/k6's examples/browser/, a 40-hex commit, its licence, a file that exists", () => {
    expect(manifest.scripts.length).toBeGreaterThanOrEqual(12);
    for (const s of [...manifest.scripts, ...manifest.modules]) {
      expect(s.repository, JSON.stringify(s)).toMatch(/^grafana\/(k6|jslib\.k6\.io)$/);
      expect(s.commit, JSON.stringify(s)).toMatch(/^[0-9a-f]{40}$/);
      expect(s.licence, JSON.stringify(s)).toBe("AGPL-3.0-only");
      readFileSync(join(BROWSER_CORPUS_DIR, s.file));
    }
    for (const s of manifest.scripts) expect(s.path).toMatch(/^examples\/browser\/[\w-]+\.js$/);
    expect(new Set(manifest.scripts.map((s) => s.name)).size).toBe(manifest.scripts.length);
    // An example left out says why, and is not also in the corpus.
    for (const left of manifest.leftOut ?? []) {
      expect(left.path, JSON.stringify(left)).toMatch(/^examples\/browser\/[\w-]+\.js$/);
      expect(left.commit, JSON.stringify(left)).toMatch(/^[0-9a-f]{40}$/);
      expect(left.reason.length, JSON.stringify(left)).toBeGreaterThan(40);
      expect(manifest.scripts.map((s) => s.path)).not.toContain(left.path);
    }
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

  it("gives ≥ 90 % of the scripts k6's exit code and checks verdict, or differs only by edgeload's no-data verdict", () => {
    const parity = [...results.values()].filter((r) => compareResult(r).parity).length;
    const noData = [...results.values()].filter(onlyNoDataVerdict);
    // The no-data ones are listed as such: a script that differs in any other way counts against the 90 %.
    for (const r of noData) expect(EXPECTED_DIFFERENCES[r.name], r.name).toMatch(/^exit 75: /);
    const share = (parity + noData.length) / manifest.scripts.length;
    expect(
      share,
      `${parity} with k6's exit and checks, ${noData.length} apart only by the no-data verdict, of ${manifest.scripts.length}`,
    ).toBeGreaterThanOrEqual(0.9);
  });

  it("is the run docs/k6.md's browser-corpus table shows (node test/support/k6-browser-corpus/docs-table.ts)", async () => {
    const docs = await readFile(join(PROJECT_ROOT, "docs/k6.md"), "utf8");
    const ordered = manifest.scripts.map((s) => results.get(s.name)).filter((r) => r !== undefined);
    expect(docsSection(docs)).toBe(browserCorpusSection(manifest, ordered));
  });
}
