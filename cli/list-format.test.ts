import { describe, expect, it } from "vitest";
import type { RunView } from "../core/run/protocol.ts";
import { listFormat, renderRuns, renderSeeds, renderStatus } from "./list-format.ts";

describe("listFormat", () => {
  it.each<[string | undefined, boolean, string]>([
    // No --format: a table for a person at a terminal, JSON for a pipe.
    [undefined, true, "table"],
    [undefined, false, "json"],
    // --format wins either way.
    ["json", true, "json"],
    ["table", false, "table"],
  ])("--format %s on a tty=%s → %s", (raw, tty, expected) => {
    expect(listFormat(raw, tty)).toBe(expected);
  });

  it("refuses another format with exit 104", () => {
    expect(() => listFormat("csv", true)).toThrow(/--format: "csv" must be table or json/);
  });
});

describe("the tables", () => {
  it("shows a run per line: id, status, threshold verdict, start, length, name, target", () => {
    const text = renderRuns([
      {
        id: "r-1",
        name: "smoke",
        status: "passed",
        target: "http://a",
        createdAt: "2026-11-25T10:00:00.000Z",
        startedAt: "2026-11-25T10:00:02.123Z",
        durationS: 30,
        thresholdsOk: true,
      },
      {
        id: "r-2",
        name: "soak",
        status: "running",
        target: "http://b",
        createdAt: "2026-11-25T11:00:00.000Z",
        startedAt: null,
        durationS: 3600,
        thresholdsOk: null,
      },
    ]);
    expect(text.split("\n")).toEqual([
      "  id   status   thresholds  started              length  name   target",
      "  r-1  passed   ✓           2026-11-25 10:00:02  30s     smoke  http://a",
      "  r-2  running  -           2026-11-25 11:00:00  3600s   soak   http://b",
    ]);
    expect(renderRuns([])).toMatch(/no runs yet/);
  });

  it("shows a seed set per line with its mix", () => {
    expect(
      renderSeeds([
        { name: "tokens-3k", kind: "access-tokens", total: 3000, size: 900_000, counts: { valid: 1800, revoked: 1200 }, createdAt: "2026-11-25T09:00:00Z" },
      ]),
    ).toContain("tokens-3k  access-tokens  3000     879 KiB  2026-11-25 09:00:00  valid 1800, revoked 1200");
  });

  it("shows a run's status a figure per line", () => {
    const view = {
      id: "r-1",
      name: "smoke",
      status: "running",
      target: "http://a",
      createdAt: "",
      startedAt: "2026-11-25T10:00:00Z",
      endedAt: null,
      abortReason: null,
      progress: { elapsedS: 12.34, durationS: 30, fraction: 0.41 },
      live: { targetRatePerS: 100, achievedRatePerS: 99.5, requests: 1234, failed: 2, dropped: 0, p95Ms: 13.4, shardsDone: 0, shards: 4 },
      thresholdsOk: null,
      lastError: null,
    } as RunView;
    expect(renderStatus(view)).toMatch(
      /^ {2}status +running\n {2}target +http:\/\/a\n {2}progress +12\.3s of 30s \(41%\)\n {2}load +target 100\.0\/s · achieved 99\.5\/s$/m,
    );
  });
});
