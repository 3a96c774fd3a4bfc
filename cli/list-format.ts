/**
 * What `edgeload runs`, `seeds` and `status` print: a table for a person at a terminal,
 * the API's JSON as it is for a pipe (`--format` picks either). Pure: the rows are built
 * from the API's answers, and nothing here reads a clock but the `nowMs` it is given.
 */
import type { RunView } from "../core/run/protocol.ts";
import { table } from "../core/run/text-format.ts";
import { formatMs } from "../core/metrics/clock-resolution.ts";
import { CliError, EXIT } from "./connection.ts";

export type ListFormat = "table" | "json";

/** `--format`, or the default: a table on a terminal, JSON when piped (as `gh` and `kubectl` tell them apart). */
export function listFormat(raw: string | undefined, stdoutIsTty: boolean): ListFormat {
  if (raw === undefined) return stdoutIsTty ? "table" : "json";
  if (raw === "table" || raw === "json") return raw;
  throw new CliError(`--format: "${raw}" must be table or json`, EXIT.invalidConfig);
}

export interface RunRow {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly target: string;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly durationS: number;
  readonly thresholdsOk: boolean | null;
}

/** `edgeload runs`: newest first, one line each. */
export function renderRuns(runs: readonly RunRow[]): string {
  if (runs.length === 0) return "no runs yet (edgeload run --help)";
  return table(
    ["id", "status", "thresholds", "started", "length", "name", "target"],
    runs.map((r) => [
      r.id,
      r.status,
      r.thresholdsOk === null ? "-" : r.thresholdsOk ? "✓" : "✗",
      shortTime(r.startedAt ?? r.createdAt),
      `${+r.durationS.toFixed(1)}s`,
      r.name,
      r.target,
    ]),
    true,
  ).join("\n");
}

export interface SeedRow {
  readonly name: string;
  readonly kind: string;
  readonly total: number;
  readonly size: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly createdAt: string;
}

/** `edgeload seeds`. */
export function renderSeeds(seeds: readonly SeedRow[]): string {
  if (seeds.length === 0) return "no seed sets yet (edgeload seed --help)";
  return table(
    ["name", "kind", "records", "size", "created", "mix"],
    seeds.map((s) => [
      s.name,
      s.kind,
      String(s.total),
      `${Math.max(1, Math.round(s.size / 1024))} KiB`,
      shortTime(s.createdAt),
      Object.entries(s.counts)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ") || "-",
    ]),
    true,
  ).join("\n");
}

/** `edgeload status <run>`: the run's state and live figures, one per line. */
export function renderStatus(view: RunView): string {
  const l = view.live;
  const p = view.progress;
  const rows: Array<[string, string]> = [
    ["run", `${view.id} · ${view.name}`],
    [
      "status",
      `${view.status}${view.abortReason ? ` (${view.abortReason})` : ""}${view.thresholdsOk === null ? "" : view.thresholdsOk ? " · thresholds ✓" : " · thresholds ✗"}`,
    ],
    ["target", view.target],
    ["progress", `${p.elapsedS.toFixed(1)}s of ${p.durationS.toFixed(0)}s (${Math.round(p.fraction * 100)}%)`],
    [
      "load",
      [
        l.targetRatePerS === null ? null : `target ${l.targetRatePerS.toFixed(1)}/s`,
        l.targetVUs === undefined ? null : `${l.targetVUs} VUs`,
        `achieved ${l.achievedRatePerS.toFixed(1)}/s`,
      ]
        .filter(Boolean)
        .join(" · "),
    ],
    ["requests", `${l.requests} · failed ${l.failed} · dropped ${l.dropped}`],
    ["p95", l.p95Ms === null ? "-" : formatMs(l.p95Ms)],
    ["shards", `${l.shardsDone} of ${l.shards} done`],
    ["started", view.startedAt],
    ...(view.endedAt ? [["ended", view.endedAt] as [string, string]] : []),
    ...(view.lastError ? [["retrying", view.lastError] as [string, string]] : []),
    ...(view.outputs ?? []).map(
      (o) =>
        [`out ${o.type}`, `${o.pushed} pushed · ${o.failedAttempts} failed attempts · ${o.dropped} dropped${o.lastError ? ` · ${o.lastError}` : ""}`] as [
          string,
          string,
        ],
    ),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join("\n");
}

/** An ISO time as "2026-11-25 14:03:12" (UTC, as stored): compact for a table. */
function shortTime(iso: string): string {
  return iso ? iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "") : "-";
}
