/**
 * After a run against a target that counts what it receives (edgeload's local target:
 * workers/target/request-ledger.ts), set what the run sent against what arrived, per
 * second and per step (core/run/delivery.ts). The run's side comes from its D1 windows over the
 * API's read-only SQL; the target's from its admin route.
 */
import { reconcileDelivery, type Delivery } from "../core/run/delivery.ts";
import type { EdgeloadClient } from "./client.ts";

/** Where a target's counts of a run are read, and the admin secret that reads them. */
export interface TargetLedger {
  readonly origin: string;
  readonly adminSecret: string;
}

/** The ledger of `target` when it is one of `known` origins (the local stack's target). */
export function ledgerFor(target: string, known: readonly string[], adminSecret: string): TargetLedger | null {
  const origin = new URL(target).origin;
  return known.some((k) => new URL(k).origin === origin) ? { origin, adminSecret } : null;
}

export async function checkDelivery(client: EdgeloadClient, runId: string, ledger: TargetLedger): Promise<Delivery> {
  const [sentRows, specRows] = await Promise.all([
    client.sql(
      "SELECT window_s AS second, step, SUM(sent) AS sent, SUM(connection_errors) AS connection_errors, SUM(timeouts) AS timeouts FROM windows WHERE run_id = ?1 GROUP BY window_s, step",
      [runId],
    ),
    client.sql("SELECT spec_json FROM runs WHERE id = ?1", [runId]),
  ]);
  const steps = (JSON.parse(String(specRows.rows[0]?.spec_json ?? "{}")) as { steps?: Array<{ name: string }> }).steps ?? [];
  const url = `${ledger.origin}/api/admin/test/request-ledger?run=${encodeURIComponent(runId)}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${ledger.adminSecret}` }, signal: AbortSignal.timeout(30_000) }).catch(
    (error: Error & { cause?: { code?: string } }) => {
      throw new Error(`the target's request ledger at ${ledger.origin} could not be read: ${error.cause?.code ?? error.message}`);
    },
  );
  if (!response.ok) throw new Error(`the target's request ledger at ${ledger.origin} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const received = (await response.json()) as { rows: Array<{ second: number; step: number; count: number }> };
  const rows = sentRows.rows as Array<{ second: number; step: string; sent: number; connection_errors: number; timeouts: number }>;
  return reconcileDelivery(
    rows.map((r) => ({ second: r.second, step: r.step, sent: r.sent })),
    received.rows.map((r) => ({ second: r.second, step: steps[r.step]?.name ?? `step${r.step}`, count: r.count })),
    { connectionErrors: rows.reduce((a, r) => a + r.connection_errors, 0), timeouts: rows.reduce((a, r) => a + r.timeouts, 0) },
  );
}
