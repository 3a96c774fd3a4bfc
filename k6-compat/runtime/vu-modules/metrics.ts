/**
 * k6/metrics for one VU: Counter, Gauge, Rate and Trend. Creating one declares it (the init
 * context collects the declarations into the run's spec); add() buffers a sample that
 * travels with the VU's next call to the host.
 */
import { type MetricType, tagsIfAny, type VuScope } from "./context.ts";

const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function createMetrics({ vu, tags: sampleTags }: VuScope) {
  const metric = (type: MetricType) =>
    class {
      readonly name: string;
      constructor(name: string, isTime = false) {
        if (!METRIC_NAME.test(String(name))) throw new Error(`invalid metric name "${name}": letters, digits and _, starting with a letter or _, at most 128`);
        this.name = name;
        // k6 hands back its own metric for a Rate named checks (k6-utils' check() adds to it): no custom one is declared.
        if (!(type === "rate" && name === "checks")) vu.declare?.(name, type, Boolean(isTime));
      }
      add(value: unknown, tags?: Record<string, unknown>): boolean {
        if (!vu.host) throw new Error(`${this.name}.add() in the init context: k6 allows it only in VU code`);
        const n = Number(value);
        if (type === "rate" && this.name === "checks") {
          // A check, as k6/check records one: named by its `check` tag.
          const check = String(tags?.check ?? "");
          vu.samples.push({ type: "check", name: check, passed: typeof value === "boolean" ? value : n !== 0, tags: { ...sampleTags(tags), check } });
          return true;
        }
        // A `type` tag is also kept as its own series (`name{type:…}`), the one tag edgeload's
        // custom metrics are split by (thresholds and summaries read it, as for built-in scenarios).
        // Every tag goes with the sample, for the sub-metrics thresholds name (core/metrics/sub-metrics.ts).
        const names = tags?.type === undefined ? [this.name] : [this.name, `${this.name}{type:${String(tags.type)}}`];
        const own = tagsIfAny(sampleTags(tags));
        names.forEach((name, i) => {
          const withTags = i === 0 ? own : {};
          if (type === "rate") vu.samples.push({ type, name, passed: typeof value === "boolean" ? value : n !== 0, ...withTags });
          else if (type === "counter") vu.samples.push({ type, name, value: n, ...withTags });
          else vu.samples.push({ type, name, value: n, ...withTags });
        });
        // k6's add() returns true once the sample is taken.
        return true;
      }
    };
  return { Counter: metric("counter"), Gauge: metric("gauge"), Rate: metric("rate"), Trend: metric("trend") };
}
