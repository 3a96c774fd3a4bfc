/**
 * k6's command-line flags merged into a k6 script's `options`, as k6 merges its layers
 * (lib/options.go, Options.Apply): `--vus` replaces `vus`; `-d`, `-i` or `--stage` replace
 * every load setting of the script (duration, iterations, stages and scenarios), after
 * which k6-compat/options.ts derives the scenario from the shortcuts as k6 does (`--stage`
 * → ramping-vus from vus, `-i` → shared-iterations, `-d` → constant-vus; vus defaults to
 * the script's, else 1). `--tag` adds to `tags`, `--threshold` replaces the thresholds of
 * its metric, `--no-thresholds` drops them all, `--rps` replaces `rps`.
 *
 * What k6 would ignore is refused instead: `--vus` alone while the script's own scenarios
 * stay (each sets its VUs), and the pairs k6 refuses too (-d with --stage, -i with --stage).
 *
 * @example applyK6Flags({ stages: [{ duration: "1m", target: 50 }] }, { load: { duration: "10s" } })
 *   // → { ok: true, value: { duration: "10s" } }: 1 VU (k6's default) for 10 s
 */
import type { Checked, LoadFlags } from "./load-overrides.ts";
import { thresholdFlags, withTagFlags } from "./run-overrides.ts";

export interface K6Flags {
  readonly load: LoadFlags;
  readonly tags?: readonly string[] | undefined;
  readonly thresholds?: readonly string[] | undefined;
  readonly noThresholds?: boolean | undefined;
}

const LOAD_OPTIONS = ["duration", "iterations", "stages", "scenarios"] as const;

export function applyK6Flags(options: Readonly<Record<string, unknown>>, f: K6Flags): Checked<Record<string, unknown>> {
  const problems: string[] = [];
  const { load } = f;
  const out: Record<string, unknown> = { ...options };
  if (load.rate !== undefined)
    problems.push("--rate: a k6 script's load is its options (or -d, -i, --stage, --vus): --rate is the --target form's and an arrival-rate spec's");
  // --rps replaces options.rps (k6-compat/runtime/rps-limit.ts); k6 takes a whole number.
  if (load.rps !== undefined && !Number.isInteger(load.rps)) problems.push(`--rps: k6 takes a whole number of requests per second, got ${load.rps}`);
  else if (load.rps !== undefined) out.rps = load.rps;
  if (load.duration !== undefined && load.stages) problems.push("-d and --stage: give one (k6 refuses the pair too): --stage's durations add up to the run's");
  if (load.iterations !== undefined && load.stages) problems.push("-i and --stage: give one (k6 refuses the pair too)");
  const replaces = load.duration !== undefined || load.iterations !== undefined || load.stages !== undefined;
  if (replaces) for (const key of LOAD_OPTIONS) delete out[key];
  if (load.duration !== undefined) out.duration = load.duration;
  if (load.iterations !== undefined) out.iterations = load.iterations;
  if (load.stages) out.stages = load.stages.map((s) => ({ ...s }));
  if (load.vus !== undefined) {
    if (out.scenarios !== undefined)
      problems.push("--vus: the script's scenarios set their own VUs; give -d, -i or --stage too to replace them with one (as k6 does)");
    out.vus = load.vus;
  }
  if (f.tags?.length) out.tags = withTagFlags(options.tags, f.tags, problems);
  if (f.noThresholds && f.thresholds?.length) problems.push("--no-thresholds and --threshold: give one");
  else if (f.noThresholds) delete out.thresholds;
  else if (f.thresholds?.length) {
    const parsed = thresholdFlags(f.thresholds);
    if (parsed.ok) out.thresholds = { ...(typeof options.thresholds === "object" && options.thresholds !== null ? options.thresholds : {}), ...parsed.value };
    else problems.push(...parsed.problems);
  }
  return problems.length ? { ok: false, problems } : { ok: true, value: out };
}
