/**
 * The browser-corpus scripts whose outcome under `edgeload run` differs from k6's, each with
 * why. test/e2e/k6-browser-corpus.test.ts fails when a script differs and is not here (a
 * regression), and when a script here no longer differs (delete its line). The reasons are
 * printed in docs/k6.md's browser-corpus table.
 */
import type { CorpusResult } from "../k6-corpus/outcome.ts";

/** grafana/k6's examples keep `checks: ["rate==1.0"]` in scripts that make no check. */
const NO_CHECKS =
  "exit 75: its threshold checks rate==1.0 has no samples (the script makes no check), so edgeload's verdict is inconclusive, the design's third verdict; k6 passes a threshold nobody measured and exits 0";

/** An option edgeload refuses before any load, naming it, in a script k6 runs to its end. */
const refused = (what: string, k6: string) => `exit 104: refused before any load: ${what}; k6 runs it and ${k6}`;

export const EXPECTED_DIFFERENCES: Readonly<Record<string, string>> = {
  "k6-browser-locator": NO_CHECKS,
  "k6-browser-locator_pom": NO_CHECKS,
  "k6-browser-multiple-scenario": NO_CHECKS,
  "k6-browser-screenshot": NO_CHECKS,
  "k6-browser-grant_permission": NO_CHECKS,
  "k6-browser-hosts": refused(
    "`options.hosts`, a platform limit (a Worker's fetch and a Browser Run browser resolve names through Cloudflare's DNS and cannot be sent to another address for one)",
    "exits 0: the navigation to 127.0.0.254 fails (nothing listens there), the script's fail() ends the iteration before its check, and k6 passes checks rate==1.0 with no samples",
  ),
};

/**
 * Whether the only difference is that verdict: edgeload exits 75 where k6 exits 0 with the
 * same checks, and the thresholds edgeload evaluated are k6's less those it had no data for.
 */
export function onlyNoDataVerdict(r: CorpusResult): boolean {
  const { k6, edgeload } = r;
  const unmeasured = Object.keys(k6.thresholds).filter((key) => !(key in edgeload.thresholds));
  return (
    edgeload.exit === 75 &&
    k6.exit === 0 &&
    k6.checks.verdict === edgeload.checks.verdict &&
    unmeasured.length > 0 &&
    Object.entries(edgeload.thresholds).every(([key, verdict]) => k6.thresholds[key] === verdict)
  );
}
