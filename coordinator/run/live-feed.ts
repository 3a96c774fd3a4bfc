/**
 * The run's live view for its dashboards: every window the coordinator takes out becomes a
 * LivePoint (core/run/live-view.ts) the tick it is taken, kept in the coordinator's storage
 * and pushed as a Server-Sent Event (live-stream.ts), with the run's status each tick; D1
 * gets the same windows a few ticks later (window-writes.ts), so the dashboards do not wait
 * for it. A page that connects mid-run receives the points so far first. The streams are in memory: a restarted object drops them and
 * the pages reconnect.
 */
import { shardWindowHealth, windowPoints, withLatePortion, type LivePoint, type ShardLatest } from "../../core/run/live-view.ts";
import type { RunStatus, ShardWindow } from "../../core/run/protocol.ts";
import type { RunSpec } from "../../core/spec/run-spec.ts";
import type { Summary } from "../../core/run/summary.ts";
import { LiveStream, sseEvent } from "./live-stream.ts";
import type { WindowCell } from "../../core/run/window-cell.ts";

export class LiveFeed {
  readonly #sql: SqlStorage;
  readonly #stream = new LiveStream();
  /** Each shard's latest window, and its health by that window while dashboards watch. */
  readonly shardHealth = new Map<number, ShardLatest>();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS live_points (window_s INTEGER PRIMARY KEY, data TEXT NOT NULL)");
  }

  /** Whether any dashboard is watching (the live status is computed only then). */
  get watched(): boolean {
    return this.#stream.size > 0;
  }

  /** A shard's newest window of a flush. */
  noteShard(shard: number, latest: ShardWindow): void {
    this.shardHealth.set(shard, { lastWindowS: latest.windowS, ...(this.watched ? shardWindowHealth(latest.steps) : {}) });
  }

  /** Sends the status (built only when someone watches) and flushes what is queued. */
  sendStatus(status: () => unknown): void {
    if (this.watched) this.#stream.send("status", status());
    this.#stream.flush();
  }

  /**
   * Stores the point of each window taken this tick (adding a late portion to its earlier
   * one) and pushes it, before the window is in D1 (pinned by window-writes.test.ts).
   */
  publishWindows(spec: RunSpec, cells: readonly WindowCell[]): void {
    for (let point of windowPoints(spec, cells)) {
      const windowS = point.t;
      const earlier = this.#sql.exec<{ data: string }>("SELECT data FROM live_points WHERE window_s = ?", windowS).toArray()[0];
      if (earlier) point = withLatePortion(JSON.parse(earlier.data) as LivePoint, point);
      this.#sql.exec("INSERT OR REPLACE INTO live_points (window_s, data) VALUES (?, ?)", windowS, JSON.stringify(point));
      this.#stream.send("window", point);
    }
  }

  /** The run's last events to its dashboards, then their streams end. */
  publishEnd(status: () => unknown, summary: Summary, runStatus: RunStatus): void {
    if (!this.watched) return;
    this.#stream.send("status", status());
    this.#stream.send("summary", summary);
    this.#stream.send("end", { status: runStatus });
    this.#stream.closeAll();
  }

  /**
   * A new watcher's stream: the windows so far and the status; after the run also the
   * summary, and then it ends. 503 when the run has as many watchers as it can serve.
   */
  open(status: unknown, ended: { summary: Summary; status: RunStatus } | null): Response {
    const points = this.#sql.exec<{ data: string }>("SELECT data FROM live_points ORDER BY window_s").toArray();
    // The points are stored as JSON already: splice them rather than parse and re-encode.
    const history = new TextEncoder().encode(`event: history\ndata: [${points.map((p) => p.data).join(",")}]\n\n`);
    const first = [history, sseEvent("status", status)];
    if (ended) first.push(sseEvent("summary", ended.summary), sseEvent("end", { status: ended.status }));
    const response = this.#stream.open(first, { closeAfterFirst: ended !== null });
    return (
      response ?? new Response("this run's live view has as many watchers as it can serve; try again later", { status: 503, headers: { "retry-after": "10" } })
    );
  }
}
