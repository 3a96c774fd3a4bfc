/**
 * The "Delivery" section of a report: what the run sent against what the target received
 * (core/run/delivery.ts), in the shape of the "Cloudflare's view" section beside it — a period,
 * the run's count, the other side's count and the difference, then the findings — so that
 * the two reconciliations read alike: one against the target itself, by second, the other
 * against Cloudflare's analytics, by minute.
 *
 * A report without one says so, and why: a missing section would read as "nothing to
 * report", when the truth is "not checked" or "could not be checked".
 */
import type { Delivery } from "../core/run/delivery.ts";
import type { Block } from "./document.ts";

/** The reconciliation, or why a target that counts could not be read (`edgeload report`). */
export type DeliveryOutcome = Delivery | { readonly notReconciled: string };

const HEADING = "Delivery (sent against received)";

/** Why a report has no reconciliation when none was attempted: the target does not count. */
const NOT_CHECKED =
  "Not checked: only a target that counts what it receives (the local stack's, started by `edgeload dev`) can be set against what the run sent, by `edgeload report` against that stack.";

/** The seconds that differ, at most this many (the totals and per-step rows always show). */
const MAX_SECONDS = 20;

export function deliveryBlocks(d: DeliveryOutcome | undefined): Block[] {
  if (d === undefined)
    return [
      { kind: "heading", level: 2, text: HEADING },
      { kind: "paragraph", text: [NOT_CHECKED] },
    ];
  if ("notReconciled" in d)
    return [
      { kind: "heading", level: 2, text: HEADING },
      { kind: "paragraph", text: [`Not reconciled: ${d.notReconciled}`] },
    ];
  const signed = (n: number) => (n > 0 ? `+${n}` : String(n));
  const differing = d.rows.filter((r) => r.difference !== 0);
  return [
    { kind: "heading", level: 2, text: HEADING },
    {
      kind: "paragraph",
      text: ["Every request carried ", { code: "x-edgeload-run" }, "; the target counted what arrived, by the second it was sent in and its step."],
    },
    {
      kind: "table",
      columns: ["second / step", "sent", "received", "Δ (received − sent)"],
      numeric: [false, true, true, true],
      rows: [
        ...differing.slice(0, MAX_SECONDS).map((r) => [`${r.second} s · ${r.step}`, String(r.sent), String(r.received), signed(r.received - r.sent)]),
        ...d.perStep.map((s) => [`step ${s.step}`, String(s.sent), String(s.received), signed(s.received - s.sent)]),
        ["run total", String(d.totals.sent), String(d.totals.received), signed(d.totals.received - d.totals.sent)],
      ],
    },
    { kind: "list", items: d.findings.map((f) => [f]) },
  ];
}
