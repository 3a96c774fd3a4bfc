/**
 * The aggregation tree of a large run: which object each shard reports its windows to,
 * so that no object's fan-in grows with the run.
 *
 * A run of at most `fanIn` shards keeps the flat shape: every shard flushes to the
 * RunCoordinator, no extra hop. A larger run gets a tree per region: the region's shards in
 * groups of at most `fanIn`, each group under an aggregator; while a region has more than
 * one aggregator at a level, they are grouped again under the next. Each region ends in one
 * root aggregator, and the roots report to the coordinator — so the coordinator hears from
 * one object per region each second, whatever the shard count, and merges regions × steps
 * cells. Start and abort travel down the same edges.
 *
 * The fan-in is set by what an aggregator receives: one flush a second from each child, plus
 * its own tick. MAX_FAN_IN keeps that at half of the ~200 requests a second the design lets
 * any object take (a retried flush is a request too), and its merge work per second at
 * `fanIn` window merges (measured by `npm run bench -- scale`).
 *
 * @example
 * const tree = planTree(plan.shards, MAX_FAN_IN);
 * tree?.parentOfShard[17]  // → 0: shard 17 reports to aggregator 0
 * tree?.roots              // → one aggregator index per region
 */

/** Children per aggregator, and most shards a run may have and stay flat (see the header). */
export const MAX_FAN_IN = 100;

export interface AggregatorPlan {
  readonly index: number;
  readonly region: string;
  /** 1 for an aggregator over shards, 2 over those, and so on. */
  readonly level: number;
  /** Indices of its children: shards at level 1, aggregators above. */
  readonly children: readonly number[];
  /** The aggregator it reports to; null for a region's root (it reports to the coordinator). */
  readonly parent: number | null;
  /** How many shards are under it, at any depth. */
  readonly shardCount: number;
}

export interface AggregationTree {
  readonly fanIn: number;
  readonly aggregators: readonly AggregatorPlan[];
  /** The aggregator each shard reports to, by shard index. */
  readonly parentOfShard: readonly number[];
  /** The region roots, one per region, in the order the regions first appear among the shards. */
  readonly roots: readonly number[];
  /** Levels of aggregators (1: shards → aggregators → coordinator). */
  readonly depth: number;
}

/** Plans the tree over `shards`; null when they are few enough to report to the coordinator directly. */
export function planTree(shards: ReadonlyArray<{ readonly index: number; readonly region: string }>, fanIn: number = MAX_FAN_IN): AggregationTree | null {
  if (!Number.isInteger(fanIn) || fanIn < 2) throw new Error(`an aggregation tree needs a fan-in of at least 2, got ${fanIn}`);
  if (shards.length <= fanIn) return null;
  const byRegion = new Map<string, number[]>();
  for (const s of shards) (byRegion.get(s.region) ?? byRegion.set(s.region, []).get(s.region)!).push(s.index);

  const aggregators: Array<Omit<AggregatorPlan, "parent"> & { parent: number | null }> = [];
  const parentOfShard = new Array<number>(shards.length);
  const roots: number[] = [];
  let depth = 0;
  for (const [region, regionShards] of byRegion) {
    // Level 1 groups the shards; each further level groups the level below, to one root.
    let level = 1;
    let below: number[] = regionShards;
    let shardCounts = regionShards.map(() => 1);
    for (;;) {
      const above: number[] = [];
      const aboveCounts: number[] = [];
      for (let i = 0; i < below.length; i += fanIn) {
        const children = below.slice(i, i + fanIn);
        const index = aggregators.length;
        const shardCount = shardCounts.slice(i, i + fanIn).reduce((a, n) => a + n, 0);
        aggregators.push({ index, region, level, children, parent: null, shardCount });
        for (const child of children) {
          if (level === 1) parentOfShard[child] = index;
          else aggregators[child]!.parent = index;
        }
        above.push(index);
        aboveCounts.push(shardCount);
      }
      depth = Math.max(depth, level);
      if (above.length === 1) {
        roots.push(above[0]!);
        break;
      }
      below = above;
      shardCounts = aboveCounts;
      level++;
    }
  }
  return { fanIn, aggregators, parentOfShard, roots, depth };
}

/** Who reports to the coordinator: the region roots of a tree, else every shard. */
export interface Reporter {
  readonly index: number;
  readonly region: string;
}

export function reportersOf(plan: { readonly shards: readonly Reporter[]; readonly tree?: AggregationTree | null }): readonly Reporter[] {
  const tree = plan.tree;
  return tree ? tree.roots.map((i) => ({ index: i, region: tree.aggregators[i]!.region })) : plan.shards;
}

/** The shards under aggregator `index`, at any depth, in index order. */
export function shardsUnder(tree: AggregationTree, index: number): number[] {
  const node = tree.aggregators[index]!;
  if (node.level === 1) return [...node.children];
  return node.children.flatMap((child) => shardsUnder(tree, child));
}
