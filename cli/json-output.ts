/**
 * `edgeload run --out json=FILE`: once the run has ended, its stored per-second windows in
 * k6's JSON-lines output shape (core/formats/k6-json-lines.ts says what each Point aggregates).
 * Written after the run rather than streamed, because the windows are final only then.
 */
import { writeFile } from "node:fs/promises";
import { JSON_LINES_QUERY, k6JsonLines } from "../core/formats/k6-json-lines.ts";
import type { Summary } from "../core/run/summary.ts";
import type { EdgeloadClient } from "./client.ts";

export async function writeJsonOutput(client: EdgeloadClient, summary: Summary, file: string): Promise<void> {
  const { runId, startedAt } = summary.edgeload;
  const { rows } = await client.query(runId, JSON_LINES_QUERY);
  await writeFile(file, k6JsonLines(rows, runId, Date.parse(startedAt)));
  console.log(`k6 JSON lines written to ${file}`);
}
