/**
 * `--out` flags of `edgeload run`, with k6's names: `json=FILE` (written by the CLI after
 * the run, json-output.ts), `opentelemetry=URL` and `experimental-prometheus-rw=URL` (push
 * outputs the coordinator serves: added to the spec's `outputs`). Anything else is refused
 * by name.
 */
import { CliError, EXIT } from "./connection.ts";

export interface OutFlags {
  readonly jsonFiles: string[];
  readonly pushOutputs: Array<{ type: "opentelemetry" | "prometheus-rw"; url: string }>;
}

export function parseOutFlags(outs: readonly string[] | undefined): OutFlags {
  const flags: OutFlags = { jsonFiles: [], pushOutputs: [] };
  for (const out of outs ?? []) {
    const eq = out.indexOf("=");
    const [type, target] = eq < 0 ? [out, ""] : [out.slice(0, eq), out.slice(eq + 1)];
    if (type === "json") {
      if (!target) throw new CliError("--out json needs a file: --out json=results.jsonl", EXIT.invalidConfig);
      flags.jsonFiles.push(target);
    } else if (type === "opentelemetry") {
      if (!target)
        throw new CliError("--out opentelemetry needs the OTLP/HTTP metrics URL: --out opentelemetry=http://127.0.0.1:4318/v1/metrics", EXIT.invalidConfig);
      flags.pushOutputs.push({ type: "opentelemetry", url: target });
    } else if (type === "experimental-prometheus-rw") {
      if (!target)
        throw new CliError(
          "--out experimental-prometheus-rw needs the remote-write URL: --out experimental-prometheus-rw=http://127.0.0.1:9090/api/v1/write",
          EXIT.invalidConfig,
        );
      flags.pushOutputs.push({ type: "prometheus-rw", url: target });
    } else {
      throw new CliError(`--out ${type}: supported are json=FILE, opentelemetry=URL and experimental-prometheus-rw=URL`, EXIT.invalidConfig);
    }
  }
  return flags;
}
