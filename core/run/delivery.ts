/**
 * Delivery: did the target receive what the client says it sent? Every load request
 * carries `x-edgeload-run: <run>;<second>;<step>` (core/run/protocol.ts RUN_HEADER); a target
 * that counts them (edgeload's own target does: workers/target/request-ledger.ts) gives
 * its side, the run's D1 windows give the client's (`sent`, counted in the second a
 * request left in). Set side by side per second and per step, with the difference and
 * what explains it.
 *
 * What a difference can be: requests that failed to connect never reached the target
 * (the client counted a connection error); requests that timed out may or may not have;
 * anything beyond those is unexplained — lost on the way, or counted by a target isolate
 * that has not reported yet. A target receiving more than was sent is another client
 * reusing the run's id, or a retry.
 *
 * This is the same question the Cloudflare analytics reconciliation asks of the edge
 * (cloudflare/analytics/reconcile.ts), asked of the target itself, second by second.
 */

export interface SentRow {
  readonly second: number;
  readonly step: string;
  readonly sent: number;
}

export interface ReceivedRow {
  readonly second: number;
  readonly step: string;
  readonly count: number;
}

export interface DeliveryRow {
  readonly second: number;
  readonly step: string;
  readonly sent: number;
  readonly received: number;
  /** sent − received. */
  readonly difference: number;
}

export interface Delivery {
  readonly rows: readonly DeliveryRow[];
  readonly totals: { readonly sent: number; readonly received: number; readonly difference: number; readonly differenceShare: number };
  readonly perStep: readonly { readonly step: string; readonly sent: number; readonly received: number; readonly difference: number }[];
  /** Of the difference: the client's connection errors and timeouts, and the rest. */
  readonly attribution: { readonly connectionErrors: number; readonly timeouts: number; readonly unexplained: number };
  readonly findings: readonly string[];
}

/** The goal: at most 0.1% of what was sent may go missing. */
export const DELIVERY_GOAL = 0.001;

export function reconcileDelivery(
  sent: readonly SentRow[],
  received: readonly ReceivedRow[],
  client: { readonly connectionErrors: number; readonly timeouts: number },
): Delivery {
  const key = (second: number, step: string) => `${second}\u0000${step}`;
  const cells = new Map<string, { second: number; step: string; sent: number; received: number }>();
  const cell = (second: number, step: string) =>
    cells.get(key(second, step)) ?? cells.set(key(second, step), { second, step, sent: 0, received: 0 }).get(key(second, step))!;
  for (const r of sent) cell(r.second, r.step).sent += r.sent;
  for (const r of received) cell(r.second, r.step).received += r.count;
  const rows = [...cells.values()]
    .sort((a, b) => a.second - b.second || (a.step < b.step ? -1 : a.step > b.step ? 1 : 0))
    .map((c) => ({ ...c, difference: c.sent - c.received }));
  const sum = (f: (r: DeliveryRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const totals = { sent: sum((r) => r.sent), received: sum((r) => r.received), difference: sum((r) => r.difference), differenceShare: 0 };
  totals.differenceShare = totals.sent ? totals.difference / totals.sent : 0;
  const steps = [...new Set(rows.map((r) => r.step))];
  const perStep = steps.map((step) => {
    const of = rows.filter((r) => r.step === step);
    const s = of.reduce((a, r) => a + r.sent, 0);
    const rec = of.reduce((a, r) => a + r.received, 0);
    return { step, sent: s, received: rec, difference: s - rec };
  });
  const missing = Math.max(0, totals.difference);
  const connectionErrors = Math.min(missing, client.connectionErrors);
  const timeouts = Math.min(missing - connectionErrors, client.timeouts);
  const attribution = { connectionErrors, timeouts, unexplained: missing - connectionErrors - timeouts };
  const findings: string[] = [];
  if (totals.difference === 0) findings.push(`every request sent was received (${totals.sent})`);
  if (connectionErrors) findings.push(`${connectionErrors} never reached the target: the client could not connect (connection errors)`);
  if (timeouts) findings.push(`${timeouts} timed out at the client: the target may or may not have received them`);
  if (attribution.unexplained)
    findings.push(
      `${attribution.unexplained} sent but not received and not explained by the client's errors: lost on the way, or counted by a target isolate that has not reported yet`,
    );
  if (totals.difference < 0)
    findings.push(`the target received ${-totals.difference} more than the run sent: another client using the run's id, or retries on the way`);
  const off = rows.filter((r) => r.difference !== 0);
  if (off.length && totals.difference === 0) findings.push(`${off.length} seconds differ but the totals match: requests counted in a neighbouring second`);
  if (totals.sent && Math.abs(totals.differenceShare) > DELIVERY_GOAL)
    findings.push(`the difference is ${(Math.abs(totals.differenceShare) * 100).toFixed(2)}% of what was sent, over the 0.1% goal`);
  return { rows, totals, perStep, attribution, findings };
}

/** The reconciliation as text: totals, per step, the seconds that differ, and findings. */
export function renderDelivery(d: Delivery): string {
  const lines = [
    `  DELIVERY (client → target, counted by the target from x-edgeload-run)`,
    `    sent ${d.totals.sent} · received ${d.totals.received} · difference ${d.totals.difference} (${(d.totals.differenceShare * 100).toFixed(3)}%)`,
    ...d.perStep.map((s) => `    step ${s.step}: sent ${s.sent} · received ${s.received} · difference ${s.difference}`),
    ...d.rows
      .filter((r) => r.difference !== 0)
      .slice(0, 10)
      .map((r) => `    second ${r.second} ${r.step}: sent ${r.sent} · received ${r.received}`),
    ...d.findings.map((f) => `    - ${f}`),
  ];
  return lines.join("\n");
}
