import { describe, expect, it } from "vitest";
import { accountFault, faultTable, type FaultObservation } from "./fault-table.ts";

const clean: FaultObservation = {
  fault: "no fault",
  scheduled: 200,
  stoppedEarly: false,
  outcome: "passed",
  expectedOutcome: "passed",
  sent: 200,
  dropped: 0,
  connectionErrors: 0,
  timeouts: 0,
  received: 200,
  summaryRequests: 200,
  storedRequests: 200,
  timeMs: 40,
  timeLabel: "recover",
};

describe("accounting a fault row", () => {
  it("is ok when the schedule, the target and both stores agree", () => {
    expect(accountFault(clean)).toMatchObject({ counted: 200, lost: 0, doubleCounted: 0, ok: true });
  });

  it("counts iterations missing from a complete run as lost, and not from a stopped one", () => {
    expect(accountFault({ ...clean, sent: 150, received: 150, summaryRequests: 150, storedRequests: 150 })).toMatchObject({ lost: 50, ok: false });
    expect(
      accountFault({
        ...clean,
        stoppedEarly: true,
        outcome: "aborted",
        expectedOutcome: "aborted",
        timeLabel: "stop",
        sent: 150,
        received: 150,
        summaryRequests: 150,
        storedRequests: 150,
      }),
    ).toMatchObject({ lost: 0, ok: true });
  });

  it("counts what the target received beyond what was counted as lost, and the reverse as double counted", () => {
    expect(accountFault({ ...clean, sent: 190, dropped: 10, received: 197, summaryRequests: 190, storedRequests: 190 })).toMatchObject({
      lost: 7,
      doubleCounted: 0,
    });
    expect(accountFault({ ...clean, received: 195 })).toMatchObject({ lost: 0, doubleCounted: 5, ok: false });
  });

  it("puts requests that could not reach the target (connection errors, timeouts) down to the client, not to a double count", () => {
    expect(accountFault({ ...clean, connectionErrors: 3, timeouts: 2, received: 195 })).toMatchObject({ doubleCounted: 0, ok: true });
  });

  it("sets the summary against D1, and the schedule against a double-counted window", () => {
    expect(accountFault({ ...clean, storedRequests: 220 })).toMatchObject({ doubleCounted: 20 });
    expect(accountFault({ ...clean, storedRequests: 180 })).toMatchObject({ lost: 20 });
    expect(accountFault({ ...clean, sent: 220, received: null, summaryRequests: 220, storedRequests: 220 })).toMatchObject({ doubleCounted: 20 });
  });

  it("accepts a loss up to the bound a fault documents, not beyond", () => {
    const crashed = { ...clean, sent: 183, dropped: 17, received: 200, summaryRequests: 183, storedRequests: 183 };
    expect(accountFault({ ...crashed, lossBound: 20 })).toMatchObject({ lost: 17, ok: true });
    expect(accountFault({ ...crashed, lossBound: 10 })).toMatchObject({ ok: false });
  });

  it("wants the documented outcome, and every shard stopped within 5 s of an abort", () => {
    expect(accountFault({ ...clean, outcome: "error" }).ok).toBe(false);
    const aborted = { ...clean, stoppedEarly: true, outcome: "aborted", expectedOutcome: "aborted", timeLabel: "stop" as const };
    expect(accountFault({ ...aborted, timeMs: 900 }).ok).toBe(true);
    expect(accountFault({ ...aborted, timeMs: 5_200 }).ok).toBe(false);
    expect(accountFault({ ...aborted, timeMs: null }).ok).toBe(false);
  });
});

describe("the table", () => {
  it("has one Markdown row per fault with the issue's columns and the notes below", () => {
    const text = faultTable([accountFault(clean), accountFault({ ...clean, fault: "D1 down", outcome: "error", note: "run ends error" })]);
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^\| fault +\| expected \| counted \| lost \| double-counted \| outcome +\| +time \| +\|$/);
    expect(lines[2]).toMatch(/^\| no fault .*\| +200 \| +200 \| +0 \| +0 \| passed .*\| +ends \+0\.0 s \| +ok \|$/);
    expect(lines[3]).toContain("error (documented: passed)");
    expect(lines[3]).toContain("NOT OK");
    expect(text).toContain("- D1 down: run ends error");
  });
});
