/**
 * The pace of the objects that merge a run's windows, the RunCoordinator and each
 * RunAggregator: they tick once a second (take in, cut off, show, pass up or write) and
 * checkpoint their totals every few seconds, so a restart replays at most that much of
 * the flush log.
 */
export const TICK_MS = 1_000;
export const CHECKPOINT_EVERY_MS = 5_000;
