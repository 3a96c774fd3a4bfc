/**
 * The spec's push outputs: `"outputs": [{ "type": "opentelemetry", "url": "…/v1/metrics",
 * "headers": { "authorization": "Bearer …" } }]`, or `"type": "prometheus-rw"` with a
 * remote-write URL (…/api/v1/write). The coordinator pushes the run's
 * cumulative metrics to each once per merged window (coordinator/run/metrics-push.ts), with a
 * timeout and bounded retries; failures are counted in the run's status, never fail it.
 * Header values are secrets: redacted wherever the spec is shown, and the spec holding
 * them is forgotten when the run ends.
 */
import { z } from "zod";

/** k6's output names: OTLP/HTTP metrics, and Prometheus remote-write (protobuf + snappy). */
export const OUTPUT_TYPES = ["opentelemetry", "prometheus-rw"] as const;
export type OutputType = (typeof OUTPUT_TYPES)[number];

export interface OutputSpec {
  readonly type: OutputType;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export const outputsSchema = z
  .array(
    z
      .object({
        type: z.enum(OUTPUT_TYPES, { message: `one of ${OUTPUT_TYPES.join(", ")}` }),
        url: z
          .string()
          .refine(
            (u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol),
            "must be an absolute http or https URL, e.g. http://127.0.0.1:4318/v1/metrics or http://127.0.0.1:9090/api/v1/write",
          ),
        headers: z.record(z.string(), z.string()).default({}),
      })
      .strict(),
  )
  .max(4, "at most 4 outputs")
  .default([]);
