/**
 * The Prometheus text exposition format, version 0.0.4 (prometheus.io/docs/instrumenting/
 * exposition_formats): the families a scrape returns, rendered as `# HELP` and `# TYPE`
 * lines followed by one line per sample, and a cumulative histogram with `le` buckets.
 * Pure: no I/O, no clock; metrics.ts gathers the numbers and serves the text.
 *
 * @example
 * renderExposition([{ name: "up", help: "Whether it is up.", type: "gauge", samples: [{ labels: {}, value: 1 }] }])
 * // "# HELP up Whether it is up.\n# TYPE up gauge\nup 1\n"
 */

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Appended to the family name: histograms have `_bucket`, `_sum` and `_count` samples. */
  readonly suffix?: "_bucket" | "_sum" | "_count";
  readonly labels: Labels;
  readonly value: number;
}

export interface MetricFamily {
  /** `[a-zA-Z_:][a-zA-Z0-9_:]*`; counters end in `_total` by convention. */
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  readonly samples: readonly Sample[];
}

/** The whole scrape body: every family's HELP, TYPE and samples, ending in a newline. */
export function renderExposition(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) lines.push(`${family.name}${sample.suffix ?? ""}${labelSet(sample.labels)} ${formatValue(sample.value)}`);
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/** `{a="1",b="2"}`, or nothing for no labels. Values escape `\`, `"` and line feeds. */
function labelSet(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

/** HELP text escapes `\` and line feeds only. */
function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** Go's float syntax as Prometheus parses it: `+Inf`, `-Inf`, `NaN`, otherwise the number. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** Upper bounds in seconds for request durations: 1 ms to 10 s. */
export const DURATION_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/**
 * A Prometheus histogram of one label set: counts per upper bound, cumulative when
 * rendered (each `le` bucket counts every observation ≤ its bound, `+Inf` counts all).
 */
export class Histogram {
  readonly bounds: readonly number[];
  readonly #counts: number[];
  #sum = 0;
  #count = 0;

  /** `bounds`: ascending upper bounds, without `+Inf` (always added). */
  constructor(bounds: readonly number[] = DURATION_BUCKETS_S) {
    this.bounds = bounds;
    this.#counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    const i = this.bounds.findIndex((bound) => value <= bound);
    if (i >= 0) this.#counts[i]!++;
    this.#sum += value;
    this.#count++;
  }

  /** The `_bucket` (cumulative, with `+Inf`), `_sum` and `_count` samples under `labels`. */
  samples(labels: Labels): Sample[] {
    let cumulative = 0;
    const buckets = this.bounds.map((bound, i): Sample => {
      cumulative += this.#counts[i]!;
      return { suffix: "_bucket", labels: { ...labels, le: formatValue(bound) }, value: cumulative };
    });
    return [
      ...buckets,
      { suffix: "_bucket", labels: { ...labels, le: "+Inf" }, value: this.#count },
      { suffix: "_sum", labels, value: this.#sum },
      { suffix: "_count", labels, value: this.#count },
    ];
  }
}
