/**
 * The RunCoordinator's parts kept in its SQL storage — the flush log, the live feed's points,
 * the children's progress — made on first use rather than with the object. Each creates its
 * table when made, so an object woken for a run it has cleaned up (a status read, a late
 * flush, the cron tick's sweep: run-cleanup.ts) would otherwise put tables back into the
 * storage it has just emptied.
 */
import { ChildProgress } from "../merge/child-progress.ts";
import { FlushLog } from "../merge/flush-log.ts";
import { LiveFeed } from "./live-feed.ts";

export class RunTables {
  readonly #sql: SqlStorage;
  #log: FlushLog | null = null;
  #live: LiveFeed | null = null;
  #children: ChildProgress | null = null;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  get log(): FlushLog {
    return (this.#log ??= new FlushLog(this.#sql));
  }

  get live(): LiveFeed {
    return (this.#live ??= new LiveFeed(this.#sql));
  }

  /** Each child's watermark, done flag and telemetry (../merge/child-progress.ts). */
  get children(): ChildProgress {
    return (this.#children ??= new ChildProgress(this.#sql));
  }

  /** The storage was deleted: what was read of it is forgotten (made again from storage on next use). */
  forget(): void {
    this.#log = null;
    this.#live = null;
    this.#children = null;
  }
}
