/**
 * The `data` section of a spec: which seed set a spec's own steps read records from, and
 * how each iteration picks one (core/data/seed-records.ts does the picking).
 */
import { z } from "zod";
import { SEED_NAME } from "../data/seed-set.ts";

export const DATA_SELECTIONS = ["per-vu", "unique", "uniform", "zipf"] as const;
export type DataSelection = (typeof DATA_SELECTIONS)[number];

export interface DataSpec {
  readonly seed: string;
  readonly select: DataSelection;
  /** Zipf exponent (select "zipf"). */
  readonly exponent: number;
}

export const dataSchema = z
  .object({
    seed: z.string().regex(SEED_NAME, "a seed set name (see GET /v1/seeds)"),
    select: z.enum(DATA_SELECTIONS).default("per-vu"),
    exponent: z.number().min(0).max(10).default(1),
  })
  .strict();
