/**
 * A k6 scenario's `options` (k6 v1.x lib/executor's BaseConfig.Options): what k6 reads there is
 * the browser type of a browser scenario, `options: { browser: { type: "chromium" } }`, which
 * k6 requires before a scenario's VUs may use k6/browser. edgeload drives Browser Run's
 * Chromium (workers/shard/browser-session.ts); anything else there is refused, naming it.
 */

/** The problems of a scenario's `options` value (empty when it is k6's browser option with Chromium). */
export function scenarioOptionsProblems(where: string, value: unknown): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where}: an object, as { browser: { type: "chromium" } }`];
  const problems: string[] = [];
  for (const [key, option] of Object.entries(value)) {
    if (key !== "browser") {
      problems.push(`${where}.${key}: not supported by edgeload (k6 reads only browser here)`);
      continue;
    }
    const type = (option as { type?: unknown } | null)?.type;
    if (type !== "chromium") problems.push(`${where}.browser.type: "chromium" is the browser k6 and Browser Run drive (got ${JSON.stringify(type)})`);
  }
  return problems;
}
