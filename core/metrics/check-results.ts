/**
 * Each k6 check's passes and fails by its group path and name: what k6's `root_group` shows
 * per check (its summary-export, handleSummary's `data`, the text summary's ✓/✗ list), beside
 * the aggregate `checks` rate that MetricStats' counters keep. Recorded where the check ran
 * (the shard), merged like every other count.
 *
 * Bounded like the error samples: MAX_CHECK_RESULTS distinct (group, name) pairs per record;
 * a script that names checks after the data it sees (`status is ${id}`) cannot grow a window,
 * a flush or the summary. Checks past the bound are counted in `othersPassed`/`othersFailed`
 * only (the aggregate rate still has them). Which pairs are kept past the bound depends on
 * the merge order; the counts never do.
 */

export const MAX_CHECK_RESULTS = 100;

export interface CheckResult {
  /** k6's group path: "" at the root, `::outer::inner` in groups. */
  readonly group: string;
  readonly name: string;
  readonly passes: number;
  readonly fails: number;
}

/** Wire form: [group, name, passes, fails] per check, then the checks past the bound. */
export interface CheckResultsWire {
  readonly k: ReadonlyArray<readonly [group: string, name: string, passes: number, fails: number]>;
  readonly o?: readonly [passes: number, fails: number];
}

export class CheckResults {
  readonly #byKey = new Map<string, { group: string; name: string; passes: number; fails: number }>();
  othersPassed = 0;
  othersFailed = 0;

  record(group: string, name: string, passed: boolean): void {
    this.add(group, name, passed ? 1 : 0, passed ? 0 : 1);
  }

  add(group: string, name: string, passes: number, fails: number): void {
    const key = `${group}\u0000${name}`;
    const known = this.#byKey.get(key);
    if (known) {
      known.passes += passes;
      known.fails += fails;
    } else if (this.#byKey.size < MAX_CHECK_RESULTS) this.#byKey.set(key, { group, name, passes, fails });
    else {
      this.othersPassed += passes;
      this.othersFailed += fails;
    }
  }

  /** The kept checks, in the order first seen (k6 lists a group's checks in the order they ran). */
  results(): CheckResult[] {
    return [...this.#byKey.values()].map((c) => ({ ...c }));
  }

  get isEmpty(): boolean {
    return this.#byKey.size === 0 && this.othersPassed === 0 && this.othersFailed === 0;
  }

  merge(other: CheckResults): this {
    return this.mergeWire(other.toWire());
  }

  mergeWire(wire: CheckResultsWire): this {
    for (const [group, name, passes, fails] of wire.k) this.add(group, name, passes, fails);
    this.othersPassed += wire.o?.[0] ?? 0;
    this.othersFailed += wire.o?.[1] ?? 0;
    return this;
  }

  toWire(): CheckResultsWire {
    const k = [...this.#byKey.values()].map((c) => [c.group, c.name, c.passes, c.fails] as const);
    return this.othersPassed || this.othersFailed ? { k, o: [this.othersPassed, this.othersFailed] } : { k };
  }
}

/** A group of k6's root_group in summary-export's shape: groups and checks by name. */
export interface GroupNode {
  readonly name: string;
  readonly path: string;
  readonly groups: Record<string, GroupNode>;
  readonly checks: Record<string, { readonly name: string; readonly path: string; readonly passes: number; readonly fails: number }>;
}

/** k6's root_group tree from the checks' group paths (`::outer::inner`). */
export function groupTree(results: readonly CheckResult[]): GroupNode {
  const root: GroupNode = { name: "", path: "", groups: {}, checks: {} };
  for (const c of results) {
    let node = root;
    for (const name of c.group.split("::").slice(1)) {
      const path = `${node.path}::${name}`;
      node = node.groups[name] ??= { name, path, groups: {}, checks: {} };
    }
    const known = node.checks[c.name];
    node.checks[c.name] = { name: c.name, path: `${node.path}::${c.name}`, passes: (known?.passes ?? 0) + c.passes, fails: (known?.fails ?? 0) + c.fails };
  }
  return root;
}
