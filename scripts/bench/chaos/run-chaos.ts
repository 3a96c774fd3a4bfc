/**
 * `npm run bench -- chaos --seeds N [--seed S] [--shape flat|tree]`: N seeded schedules of
 * 2–6 faults (./schedule.ts) per shape, from seed S, each played over a short run inside
 * workerd (../faults/in-workerd/chaos.seeds.ts, through ./vitest.config.ts) and judged
 * against the invariants (./invariants.ts). Prints a table per shape — seeds tried, faults
 * drawn, how often each invariant held, time per seed; then the statuses the runs ended
 * with, and how the seeds with a setup killed or D1 away for minutes ended — and, for each
 * failing seed, its schedule shrunk to a minimal one that still fails (faults dropped one
 * at a time while it does). Returns false when a seed failed.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../../cli/local-stack.ts";
import { markdownTable } from "../markdown-table.ts";
import { INVARIANTS, judge, type ChaosObservation } from "./invariants.ts";
import { describeFault, drawSchedule, withoutFault, type ChaosSchedule, type FaultKind, type Shape } from "./schedule.ts";

interface Played {
  readonly schedule: ChaosSchedule;
  /** null: the run could not be observed (the reason in `error`). */
  readonly observation: ChaosObservation | null;
  readonly error: string | null;
  readonly durationMs: number;
}

interface VitestReport {
  readonly testResults: ReadonlyArray<{
    readonly assertionResults: ReadonlyArray<{
      readonly title: string;
      readonly status: string;
      readonly duration?: number;
      readonly failureMessages: readonly string[];
      readonly meta?: { chaos?: ChaosObservation };
    }>;
  }>;
}

/** Plays `schedules` in one workerd (in order, one run at a time: some faults touch what every run shares). */
async function play(schedules: readonly ChaosSchedule[], log: (line: string) => void): Promise<Played[]> {
  const report = join(PROJECT_ROOT, ".cache", `chaos-in-workerd-${process.pid}.json`);
  await rm(report, { force: true });
  const vitest = join(PROJECT_ROOT, "node_modules", "vitest", "vitest.mjs");
  const child = spawn(process.execPath, [vitest, "run", "--config", "scripts/bench/chaos/vitest.config.ts", "--reporter=json", `--outputFile=${report}`], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CHAOS_SCHEDULES: JSON.stringify(schedules) },
  });
  let stderr = "";
  // Each seed's line, as it ends (vitest passes the objects' console on, to either stream).
  const progress = (d: Buffer) => {
    for (const line of String(d).split("\n")) if (line.startsWith("chaos: ")) log(`  ${line.slice(7)}`);
  };
  child.stdout.on("data", progress);
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d).slice(-4000);
    progress(d);
  });
  await once(child, "exit");
  const parsed = JSON.parse(
    await readFile(report, "utf8").catch(() => {
      throw new Error(`the chaos runs did not report:\n${stderr}`);
    }),
  ) as VitestReport;
  await rm(report, { force: true });
  const results = parsed.testResults.flatMap((f) => f.assertionResults);
  return schedules.map((schedule, n) => {
    const result = results.find((r) => r.title.endsWith(`#${n}`));
    return {
      schedule,
      observation: result?.meta?.chaos ?? null,
      error: result?.meta?.chaos ? null : (result?.failureMessages.join("\n").slice(0, 600) ?? "not run"),
      durationMs: result?.duration ?? 0,
    };
  });
}

const fails = (p: Played) => p.observation === null || INVARIANTS.some((i) => !judge(p.observation!).held[i]);

/**
 * Drops faults while the schedule still fails: each round plays every schedule one fault
 * smaller in one workerd (the first round the whole schedule too, to see that it fails
 * again), and goes on from the first that fails; the smallest failing schedule found.
 */
async function shrink(schedule: ChaosSchedule, log: (line: string) => void): Promise<{ schedule: ChaosSchedule; reproduced: boolean }> {
  let smallest = schedule;
  for (let round = 0; smallest.faults.length > 1; round++) {
    const candidates = smallest.faults.map((_, i) => withoutFault(smallest, i));
    const played = await play(round === 0 ? [smallest, ...candidates] : candidates, log);
    if (round === 0 && !fails(played.shift()!)) return { schedule, reproduced: false };
    const failing = played.find(fails);
    if (!failing) break;
    smallest = failing.schedule;
  }
  return { schedule: smallest, reproduced: true };
}

function summaryTable(shape: Shape, played: readonly Played[]): string {
  const kinds = new Map<FaultKind, number>();
  for (const p of played) for (const f of p.schedule.faults) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
  const judged = played.map((p) => (p.observation ? judge(p.observation) : null));
  const held = (i: (typeof INVARIANTS)[number]) => `${judged.filter((j) => j?.held[i]).length}/${played.length}`;
  const seconds = played.map((p) => p.durationMs / 1000).sort((a, b) => a - b);
  const seeds = played.map((p) => p.schedule.seed);
  const row = [
    shape,
    seeds.length > 1 && seeds.every((seed, i) => i === 0 || seed === seeds[i - 1]! + 1)
      ? `${played.length} (${seeds[0]}–${seeds.at(-1)})`
      : `${played.length} (${seeds.join(", ")})`,
    String(played.reduce((a, p) => a + p.schedule.faults.length, 0)),
    ...INVARIANTS.map(held),
    `${judged.filter((j) => j && INVARIANTS.every((i) => j.held[i])).length}/${played.length}`,
    `${(seconds[Math.floor(seconds.length / 2)] ?? 0).toFixed(1)} / ${(seconds.at(-1) ?? 0).toFixed(1)} s`,
  ];
  const header = ["shape", "seeds", "faults drawn", ...INVARIANTS, "all held", "per seed (median / max)"];
  const drawn = [...kinds].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
  const statuses = new Map<string, number>();
  for (const p of played) if (p.observation) statuses.set(p.observation.status, (statuses.get(p.observation.status) ?? 0) + 1);
  return [
    markdownTable(header, [row], new Set([0])),
    "",
    `Faults drawn (${shape}): ${drawn.join(", ")}.`,
    "",
    `Statuses (${shape}): ${[...statuses].map(([status, n]) => `${status} ${n}`).join(", ")}.${lateEnds(played)}`,
  ].join("\n");
}

/** How each seed that drew a setup killed or D1 away for minutes ended, and when: their end is what those faults test. */
function lateEnds(played: readonly Played[]): string {
  const ends = played.flatMap((p) => {
    const late = p.schedule.faults.filter((f) => f.kind === "setup-killed" || f.kind === "d1-refusing-long").map(describeFault);
    const o = p.observation;
    if (!late.length || !o) return [];
    const at = o.finalAtMs === null ? "not final" : `final at t0 + ${((o.finalAtMs - o.t0Ms) / 1000).toFixed(1)} s`;
    return [`seed ${p.schedule.seed} (${late.join(", ")}): ${o.status}, ${at}`];
  });
  return ends.length ? ` ${ends.join("; ")}.` : "";
}

export async function chaosBench(options: { seeds: readonly number[]; shapes: readonly Shape[]; shrink: boolean }): Promise<boolean> {
  const log = (line: string) => console.error(line);
  let ok = true;
  for (const shape of options.shapes) {
    console.log(`\n## Chaos (${shape}): ${options.seeds.length} seeded schedules of 2–6 faults, invariants after each\n`);
    const schedules = options.seeds.map((seed) => drawSchedule(seed, shape));
    console.error(`chaos ${shape}: ${options.seeds.length} seeds…`);
    const startedAt = Date.now();
    const played = await play(schedules, log);
    console.log(summaryTable(shape, played));
    console.log(`\n${played.length} seeds in ${((Date.now() - startedAt) / 1000).toFixed(0)} s (with workerd's start).`);
    const failed = played.filter(fails);
    for (const p of failed) {
      ok = false;
      const why = p.observation ? judge(p.observation).why.join("; ") : `not observed: ${p.error}`;
      console.log(`\n- **seed ${p.schedule.seed} (${shape}) failed**: ${why}`);
      console.log(`  schedule: ${p.schedule.faults.map(describeFault).join("; ")}`);
    }
    if (!options.shrink) continue;
    for (const p of failed) {
      const shrunk = await shrink(p.schedule, log);
      console.log(`\n- seed ${p.schedule.seed} (${shape}), shrunk:`);
      console.log(
        shrunk.reproduced ? `  minimal: ${shrunk.schedule.faults.map(describeFault).join("; ")}` : "  did not fail again when replayed (timing): kept as found",
      );
    }
  }
  return ok;
}
