/**
 * A k6 Gauge's value: the last one it was given (k6's GaugeSink keeps `Value = s.Value` on
 * every sample; a threshold on a gauge reads only that `value`). On one k6 machine "last" is
 * the order samples arrive in. Across shards edgeload keeps the value set last by the shards'
 * clocks, to the millisecond, and of two set in the same millisecond by different shards the
 * larger: a maximum over (time, value), so windows and shards merge in any order or grouping
 * to the same value, as every other series does (metric-stats.ts).
 *
 * @example laterGauge([1_000, 5], [1_002, 3]) // [1_002, 3]: set later
 * @example laterGauge([1_000, 5], [1_000, 3]) // [1_000, 5]: same ms, the larger
 */

/** When the gauge was set (epoch ms, the shard's clock) and to what. */
export type GaugeLast = readonly [atMs: number, value: number];

/** The merge of two last values: the later, or the larger of two set in the same ms. */
export function laterGauge(a: GaugeLast | undefined, b: GaugeLast): GaugeLast {
  if (a === undefined) return b;
  if (a[0] !== b[0]) return a[0] > b[0] ? a : b;
  return a[1] >= b[1] ? a : b;
}

/**
 * A sample recorded where it happens, over the value kept: within one shard samples come in
 * order, so one set in the same ms as the kept value replaces it, as k6's last sample does.
 */
export function recordedGauge(kept: GaugeLast | undefined, atMs: number, value: number): GaugeLast {
  return kept !== undefined && kept[0] > atMs ? kept : [atMs, value];
}
