/**
 * The scale bench's rows by kind of object (issue 49): for shards, aggregators and the
 * coordinator, what the simulated run counted — storage rows written, billed requests, Workers
 * Logs events, storage bytes left once cleaned up — beside the plan's own figure
 * (core/plan/run-usage.ts, as `edgeload plan` prices it) and their ratio. A figure more than
 * 10 % off the plan's, either way, is flagged in its cell and listed once the table is out, and
 * the bench exits non-zero: an estimate under the count under-states the bill, one over it
 * misleads too.
 *
 * Log events are counted at head_sampling_rate 1 (every invocation, and each console line the
 * objects wrote); the deployment samples 0.01 of them (wrangler.toml), the plan the same share.
 */
import { preflight } from "../../core/plan/preflight.ts";
import { reportingEndLagS } from "../../core/plan/object-requests.ts";
import type { ByKind, ScaleResult } from "./scale-result.ts";

/** How far a count may be from the plan's, as a share of the count. */
export const WITHIN = 0.1;
const KINDS = ["shards", "aggregators", "coordinator"] as const;

const int = (n: number) => Math.round(n).toLocaleString("en-US");

/** A row of the table: its name and its cell for one run. */
export type KindRow = readonly [name: string, cell: (r: ScaleResult) => string];

/** The cells that were outside WITHIN, "row @ rate: cell", as the table was drawn. */
export class Flags {
  readonly #found: string[] = [];

  /** `measured` beside `model` and their ratio (model ÷ measured), flagged when outside WITHIN. */
  cell(row: string, r: ScaleResult, measured: number, model: number): string {
    const text = `${int(measured)} (${int(model)}, ×${measured ? (model / measured).toFixed(2) : "–"})`;
    const off = measured === 0 ? model !== 0 : Math.abs(model - measured) > WITHIN * measured;
    return off ? this.#flag(row, r, text, `outside ${WITHIN * 100} %`) : text;
  }

  /** A cell that must hold `ok`, flagged otherwise with `why`. */
  check(row: string, r: ScaleResult, ok: boolean, text: string, why: string): string {
    return ok ? text : this.#flag(row, r, text, why);
  }

  get found(): readonly string[] {
    return this.#found;
  }

  #flag(row: string, r: ScaleResult, text: string, why: string): string {
    this.#found.push(`${row} @ ${int(r.plan.shards.length)} shards: ${text}, ${why}`);
    return `${text} ⚠ ${why}`;
  }
}

/** The plan's usage of a simulated run, its logs counted at head_sampling_rate 1 as the simulation counts them. */
function usageOf(r: ScaleResult) {
  return preflight(r.spec, r.plan, { logsSamplingRate: 1 }).usage;
}

/** The rows by kind of object, each a count beside the plan's (see the header). */
export function kindRows(flags: Flags): KindRow[] {
  const perKind = (what: string, measured: (r: ScaleResult) => ByKind, model: (r: ScaleResult) => ByKind): KindRow[] =>
    KINDS.map((kind) => {
      const name = `${what}: ${kind} (plan, ×)`;
      return [name, (r: ScaleResult) => flags.cell(name, r, measured(r)[kind], model(r)[kind])];
    });
  const rowsModel = (r: ScaleResult): ByKind => {
    const u = usageOf(r);
    return { shards: u.shardRowsWritten, aggregators: u.aggregators.rowsWritten, coordinator: u.coordinatorRowsWritten };
  };
  // Every invocation is an execution log; console lines are counted for all the objects together (their own row).
  const left = "storage bytes left once cleaned up: shards / aggregators / coordinator (plan)";
  const consoleRow = "console lines the objects wrote, each a log event (plan)";
  const lagRow = "last reporter done after the schedule, s (plan: at most)";
  return [
    ...perKind("storage rows written", (r) => r.storageRows, rowsModel),
    ...perKind(
      "requests",
      (r) => r.requestsByKind,
      (r) => usageOf(r).requestsByKind,
    ),
    ...perKind(
      "log events at sampling 1",
      (r) => r.requestsByKind,
      (r) => usageOf(r).logEventsByKind,
    ),
    [consoleRow, (r) => flags.check(consoleRow, r, r.consoleLines === 0, `${int(r.consoleLines)} (0)`, "the plan counts none")],
    [
      "storage bytes as the run ended: shards / aggregators / coordinator (plan: at most, while it runs)",
      (r) => `${KINDS.map((k) => int(r.storageBytesAtEnd[k])).join(" / ")} (${int(usageOf(r).storage.durableObjectBytes)})`,
    ],
    [
      left,
      (r) =>
        flags.check(
          left,
          r,
          KINDS.every((k) => r.storageBytesAfterCleanUp[k] === 0),
          `${KINDS.map((k) => int(r.storageBytesAfterCleanUp[k])).join(" / ")} (0)`,
          "left behind",
        ),
    ],
    [
      lagRow,
      (r) => {
        const model = reportingEndLagS(r.tree, r.spec.expectedLatencyMs);
        return flags.check(
          lagRow,
          r,
          r.reportersDoneAfterScheduleMs / 1000 <= model,
          `${(r.reportersDoneAfterScheduleMs / 1000).toFixed(2)} (${model.toFixed(2)})`,
          "later than planned",
        );
      },
    ],
  ];
}

/** An aborted run's requests by kind beside the whole run's plan: an abort adds one to each object, and stops the sending. */
export function abortRequestsCell(r: ScaleResult): string {
  const model = usageOf(r).requestsByKind;
  return KINDS.map((k) => `${int(r.requestsByKind[k])} (${int(model[k])})`).join(" / ");
}
